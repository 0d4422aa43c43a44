"""`traceladder trend`: the statistics against known values, the views, the CLI's drop alarm. Stores
are built by inserting the evaluation's outputs (traces, trace_results, rung_results, findings)."""

from __future__ import annotations

import hashlib
import json
import math
import re
from datetime import UTC, datetime, timedelta
from itertools import count

import duckdb
import pytest
from conftest import cli, cli_in_process

from traceladder.extract.version import EXTRACTION_VERSION, conventions_stamp
from traceladder.report.stats import two_proportion_z, wilson
from traceladder.store.db import Store
from traceladder.store.migrations import MIGRATIONS

DAY1 = datetime(2024, 5, 1, 10, 0)
_ids = count(1)

# rows written by hand carry today's extraction stamp, as the stage would write them
CURRENT_STAMP = (EXTRACTION_VERSION, conventions_stamp(""))


def ns(at: datetime) -> int:
    """Unix nanoseconds of a naive UTC time, as `traces.start_ns` holds them."""
    return int(at.replace(tzinfo=UTC).timestamp() * 1e9)


@pytest.mark.parametrize(
    ("passed", "n", "low", "high"),
    [
        # Newcombe (1998), Statistics in Medicine 17:857, Table I, method 3 (score, no continuity correction)
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
        # by hand: centre (1 + 1.96²/60) / (1 + 1.96²/30) = 0.94325, half 1.96²/60 / (1 + 1.96²/30) = 0.05676
        (30, 30, 0.8865, 1.0),
    ],
)
def test_wilson_matches_published_intervals(passed, n, low, high):
    assert wilson(passed, n) == pytest.approx((low, high), abs=5e-5)


def test_edges_of_both_statistics():
    assert wilson(0, 0) == (0.0, 1.0)  # no evidence: the whole range
    assert wilson(0, 5)[0] == 0.0 and wilson(5, 5)[1] == 1.0  # never outside [0, 1]
    low, high = wilson(2.5, 10.0)  # fractional (weighted) counts work; less evidence, a wider interval
    assert low < 0.25 < high and high - low > wilson(25, 100)[1] - wilson(25, 100)[0]
    for bad in ((3, 2), (-1, 2), (1, -1), (math.nan, 2)):
        with pytest.raises(ValueError):
            wilson(*bad)
    with pytest.raises(ValueError):
        two_proportion_z(1.2, 10, 0.5, 10)
    assert two_proportion_z(0.9, 0, 0.1, 50) == (0.0, 1.0)  # an empty side: nothing to test
    assert two_proportion_z(1.0, 50, 1.0, 50) == (0.0, 1.0)  # everything passed on both sides
    assert two_proportion_z(0.0, 50, 0.0, 50) == (0.0, 1.0)
    z, p = two_proportion_z(1.0, 50, 0.0, 50)  # pooled 0.5: as far apart as rates go
    assert z == pytest.approx(10.0) and p < 1e-20


def test_two_proportion_z_matches_hand_computation():
    # p1 = 0.5, p2 = 0.4, n = 100 each: pooled 0.45, se = sqrt(0.45·0.55·(2/100)) = 0.0703562,
    # z = 0.1 / se = 1.42134, one-sided p = 1 − Φ(1.42134) = 0.07761
    z, p = two_proportion_z(0.5, 100, 0.4, 100)
    assert z == pytest.approx(1.42134, abs=1e-5) and p == pytest.approx(0.07761, abs=1e-5)
    # 40/40 then 20/40: pooled 0.75, se = sqrt(0.1875·0.05) = 0.0968246, z = 5.16398, p = 1.2087e-7
    z, p = two_proportion_z(1.0, 40, 0.5, 40)
    assert z == pytest.approx(5.16398, abs=1e-5) and p == pytest.approx(1.2087e-7, rel=1e-3)
    # a rise is a negative z, its p-value the complement
    z, p = two_proportion_z(0.4, 100, 0.5, 100)
    assert z == pytest.approx(-1.42134, abs=1e-5) and p == pytest.approx(1 - 0.07761, abs=1e-5)


def add(store, n, *, version="1.0", verdict="PASS", cls=None, weight=1.0, first_seen=DAY1, start=None,
        service="shop", environment="prod", finding=("schema", 1, "get_order", "orderId")):  # fmt: skip
    """`n` traces with a result: a FAIL fails its finding's rung; not PASS or FAIL: rungs not_evaluated."""
    for _ in range(n):
        trace_id = f"{next(_ids):032x}"
        store.execute(
            "INSERT INTO traces VALUES (?, ?, ?, 1, 1, true, ?, NULL, false, ?, ?, ?, NULL, 1, ?, ?, NULL)",
            [trace_id, first_seen, first_seen, start, service, version, environment, *CURRENT_STAMP],
        )
        store.execute(
            "INSERT INTO trace_results (trace_id, verdict, failure_class, evaluator_version, evaluated_at, "
            "sample_weight) VALUES (?, ?, ?, '2.0.0', ?, ?)",
            [trace_id, verdict, cls, first_seen, weight],
        )
        for name in ("schema", "invariants"):
            status = "fail" if verdict == "FAIL" and name == finding[0] else "pass"
            store.execute(
                "INSERT INTO rung_results (trace_id, rung, rung_name, status, evaluator_version) "
                "VALUES (?, 1, ?, ?, '2.0.0')",
                [trace_id, name, status if verdict in ("PASS", "FAIL") else "not_evaluated"],
            )
        if verdict == "FAIL":
            rung_name, rung, tool, param = finding
            store.execute(
                "INSERT INTO findings (trace_id, rung, rung_name, code, tool, param, evaluator_version) "
                "VALUES (?, ?, ?, ?, ?, ?, '2.0.0')",
                [trace_id, rung, rung_name, cls, tool, param],
            )


@pytest.fixture
def db(tmp_path):
    return tmp_path / "trend.duckdb"


def trend_json(db, *args):
    result = cli("trend", "--db", str(db), "--format", "json", *args)
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads(result.stdout)


def test_a_version_drop_is_flagged_with_the_class_that_grew(db):
    with Store(db) as store:
        add(store, 40, version="1.9")  # earlier deploy: every trace passes
        later = DAY1 + timedelta(days=1)  # "1.10" sorts before "1.9" as text: order is first_seen
        add(store, 20, version="1.10", first_seen=later)
        add(store, 20, version="1.10", first_seen=later, verdict="FAIL", cls="PARAM_UNEXPECTED")
        add(store, 5, version="1.10", first_seen=later, verdict="NOT_EVALUATED")  # counted, not rated
    result = cli("trend", "--db", str(db))
    assert result.returncode == 1, result.stderr
    drop = [line for line in result.stdout.splitlines() if line.startswith("DROP:")]
    assert drop == [
        "DROP: service shop (prod) version 1.10 pass rate 50.0% [35.2%, 64.8%] vs 1.9 100.0% [91.2%, 100.0%], "
        "z=5.16, p=1.21e-07 < 0.05; grew: PARAM_UNEXPECTED +50% (rung 1 schema, get_order.orderId)"
    ]
    assert result.stderr == f"traceladder: trend: {drop[0]}\n"  # exit 1: exactly one line on stderr
    code, out = trend_json(db)
    assert code == 1 and out["drops"] == 1
    [comparison] = out["comparisons"]
    assert (comparison["previous"], comparison["current"], comparison["flagged"]) == ("1.9", "1.10", True)
    assert comparison["grew"] == [
        {"failure_class": "PARAM_UNEXPECTED", "before": 0.0, "after": 0.5, "rung": 1, "rung_name": "schema",
         "tool": "get_order", "param": "orderId"}
    ]  # fmt: skip
    later_bucket = out["buckets"][1]
    assert (later_bucket["traces"], later_bucket["judged"], later_bucket["passed"]) == (45.0, 40.0, 20.0)
    assert later_bucket["rungs"] == [  # both rung-1 rungs, each by its own name
        {"rung": 1, "rung_name": "invariants", "passed": 40.0, "judged": 40.0, "pass_rate": 1.0},
        {"rung": 1, "rung_name": "schema", "passed": 20.0, "judged": 40.0, "pass_rate": 0.5},
    ]


def test_similar_rates_are_not_a_drop(db):
    with Store(db) as store:
        add(store, 36, version="1.0")
        add(store, 4, version="1.0", verdict="FAIL", cls="PARAM_WRONG_VALUE")
        later = DAY1 + timedelta(hours=3)
        add(store, 35, version="1.1", first_seen=later)
        add(store, 5, version="1.1", first_seen=later, verdict="FAIL", cls="PARAM_WRONG_VALUE")
    result = cli("trend", "--db", str(db))
    assert result.returncode == 0, result.stderr
    assert "no drop: service shop (prod) version 1.1 pass rate 87.5%" in result.stdout
    assert "z=0.35, p=0.362 >= 0.05" in result.stdout and result.stderr == ""


def test_too_few_traces_are_never_flagged(db):
    with Store(db) as store:
        add(store, 10, version="1.0")
        add(store, 10, version="1.1", first_seen=DAY1 + timedelta(hours=1), verdict="FAIL", cls="TOOL_WRONG")
    result = cli("trend", "--db", str(db))
    assert result.returncode == 0, result.stderr
    assert (
        "not enough traces to compare: service shop (prod) version 1.1 (10 scored) vs 1.0 (10 scored); "
        "each needs --min-traces 30" in result.stdout
    )
    assert cli("trend", "--db", str(db), "--min-traces", "10").returncode == 1  # same data, lower bar


def test_sample_weights_change_the_rate_and_the_interval_counts_real_evidence(db):
    with Store(db) as store:
        add(store, 10, version="1.0")  # weight 1
        add(store, 10, version="1.0", verdict="FAIL", cls="TOOL_WRONG", weight=3.0)  # each stands for 3
        add(store, 2, version="1.0", weight=None)  # NULL weight counts 1
        row = store.fetchall(
            "SELECT scored, passed, pass_rate, ci_low, ci_high, scored_effective FROM trend_by_version"
        )
    judged, passed, rate, low, high, effective = row[0]
    assert (judged, passed, rate) == (42.0, 12.0, pytest.approx(12 / 42))  # unweighted it would be 12/22
    assert effective == pytest.approx(42**2 / (12 + 90))  # Kish: (Σw)² / Σw² = 17.3, not 42
    assert (low, high) == pytest.approx(wilson(rate * effective, effective))


def test_hour_and_day_buckets_use_the_root_span_start(db):
    arrived = datetime(2024, 5, 2, 0, 30)  # all arrive together; their spans started at different times
    with Store(db) as store:
        for n, day, hour, minute in ((2, 1, 10, 15), (3, 1, 11, 5), (4, 2, 0, 10)):
            add(store, n, first_seen=arrived, start=ns(datetime(2024, 5, day, hour, minute)))
        add(store, 1, first_seen=arrived, start=ns(datetime(2024, 5, 1, 10, 45)), verdict="FAIL", cls="X")
    _, hours = trend_json(db, "--by", "hour")
    assert [(b["bucket"], b["traces"], b["passed"]) for b in hours["buckets"]] == [
        ("2024-05-01T10:00:00", 3.0, 2.0),
        ("2024-05-01T11:00:00", 3.0, 3.0),
        ("2024-05-02T00:00:00", 4.0, 4.0),
    ]
    _, days = trend_json(db, "--by", "day")
    assert [(b["bucket"], b["traces"]) for b in days["buckets"]] == [
        ("2024-05-01T00:00:00", 6.0),
        ("2024-05-02T00:00:00", 4.0),
    ]
    text = cli("trend", "--db", str(db), "--by", "hour").stdout
    assert "2024-05-01 11:00" in text and "not enough traces to compare" in text


def test_a_start_in_the_future_falls_back_to_first_seen(db):
    seen = datetime(2024, 5, 1, 10, 50)
    with Store(db) as store:
        add(store, 1, first_seen=seen, start=ns(seen + timedelta(minutes=30)))  # within the skew guard: 11:00
        # a clock running ahead: first_seen's 10:00
        add(store, 1, first_seen=seen, start=ns(seen + timedelta(hours=3)))
        add(store, 1, first_seen=seen, start=None)  # no root yet: 10:00
        add(store, 1, first_seen=seen, start=-5)  # nonsense: 10:00
        rows = store.fetchall("SELECT bucket, traces FROM trend_by_hour ORDER BY bucket")
    assert rows == [(datetime(2024, 5, 1, 10), 3.0), (datetime(2024, 5, 1, 11), 1.0)]


def test_views_and_cli_json_agree(db):
    with Store(db) as store:
        add(store, 31, version="1.0")
        no_call = ("schema", 1, None, None)
        add(store, 3, version="1.0", verdict="AGENT_ERROR", cls="AGENT_TIMEOUT", finding=no_call)
        add(store, 30, version="2.0", first_seen=DAY1 + timedelta(hours=30), weight=2.0)
        add(store, 6, version="2.0", first_seen=DAY1 + timedelta(hours=30), verdict="SKIP")
        add(store, 5, version=None, environment=None, first_seen=DAY1 + timedelta(hours=2))
        views = {by: store.conn.sql(f"SELECT * FROM trend_by_{by}") for by in ("version", "hour", "day")}
        views = {by: [dict(zip(v.columns, r, strict=True)) for r in v.fetchall()] for by, v in views.items()}
    for by, rows in views.items():
        _, out = trend_json(db, "--by", by)
        shown = [
            {k: v for k, v in b.items() if k not in {"rungs", "failure_classes", "conversations"}}
            for b in out["buckets"]
        ]
        rows = [{k: v.isoformat() if isinstance(v, datetime) else v for k, v in r.items()} for r in rows]
        key = lambda r: json.dumps(r, sort_keys=True)  # noqa: E731
        assert sorted(shown, key=key) == sorted(rows, key=key), by
        for row in rows:  # the SQL interval is the Python one
            n = row["scored_effective"]
            assert (row["ci_low"], row["ci_high"]) == pytest.approx(
                wilson(row["pass_rate"] * n, n), abs=1e-12
            )
    _, out = trend_json(db)
    assert [c["previous"] for c in out["comparisons"]] == ["1.0"]  # the unversioned traces are not a deploy
    first = out["buckets"][0]
    assert (first["judged"], first["passed"], first["failure_classes"][0]["failure_class"]) == (
        34.0, 31.0, "AGENT_TIMEOUT"
    )  # fmt: skip
    assert first["failure_classes"][0]["tool"] is None and out["comparisons"][0]["tested"] is True


def test_an_empty_store_says_so_and_exits_0(db):
    Store(db).close()
    result = cli("trend", "--db", str(db))
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == "no traces in the store yet; nothing to compare\n"
    with Store(db) as store:
        store.execute("INSERT INTO traces VALUES ('ab', now(), now(), 1, 1, true, NULL, NULL, false, 'shop', "
                      "'1.0', NULL, NULL, 0, ?, ?, NULL)", list(CURRENT_STAMP))  # fmt: skip
    result = cli("trend", "--db", str(db))
    assert result.returncode == 0 and result.stdout.startswith("no judged traces yet (1 trace(s) stored;")
    code, out = trend_json(db)
    assert code == 0 and out["message"].startswith("no judged traces yet") and out["buckets"] == []


def test_bad_input_is_one_line_and_exit_2(db):
    with Store(db) as store:
        add(store, 2)
    for args, words in ((("--service", "shopp"), "no trace in the store has service 'shopp' (known: shop)"),
                        (("--alpha", "1.5"), "must be between 0 and 1"),
                        (("--min-traces", "0"), "outside"), (("--by", "week"), "invalid choice")):  # fmt: skip
        result = cli("trend", "--db", str(db), *args)
        assert result.returncode == 2 and words in result.stderr, (args, result.stderr)
        assert result.stderr.count("\n") == 1


def test_sampling_is_named_in_the_header(db):
    with Store(db) as store:
        add(store, 3)
        store.execute("INSERT INTO sampling (stage, rate, keep_errors) VALUES ('serve', 0.5, false)")
        store.execute("INSERT INTO sampling (stage, rate, keep_errors) VALUES ('evaluate', 0.1, true)")
    out = cli("trend", "--db", str(db)).stdout
    assert (
        "sampling: evaluate sampled 10%, keeping every error trace (judged traces weighted by what they stand "
        "for); serve sampled 50% of traces before storing (counts are of stored traces)" in out
    )


def _store_before(db, migration: str) -> None:
    with duckdb.connect(str(db)) as conn:
        conn.execute("CREATE TABLE schema_migrations (name VARCHAR PRIMARY KEY, applied_at TIMESTAMP)")
        for name, sql in MIGRATIONS:
            if name == migration:
                break
            conn.execute(sql)
            conn.execute("INSERT INTO schema_migrations VALUES (?, now())", [name])


def test_a_store_from_before_the_trend_views_is_read_without_migrating_it(db):
    """`trend` is a reader: a store from before the trend views gets them as temporary views, and
    the file keeps its migrations (a writing command upgrades it)."""
    _store_before(db, "007_trend_views")
    result = cli("trend", "--db", str(db))
    assert result.returncode == 0 and result.stdout.startswith("no traces in the store yet"), result.stderr
    with Store(db, read_only=True) as store:
        assert store.applied_migrations()[-1] == "006_live_traces"


def test_the_pass_rate_is_the_reports_and_the_success_rate_counts_agent_errors(db):
    """One definition under one name: `trend`'s pass rate is the report's and the gate's,
    PASS / (PASS + FAIL); the rate that counts AGENT_ERROR as a failure is `success_rate`."""
    with Store(db) as store:
        add(store, 31, version="1.0")
        add(store, 9, version="1.0", verdict="FAIL", cls="TOOL_WRONG")
        add(
            store,
            10,
            version="1.0",
            verdict="AGENT_ERROR",
            cls="AGENT_TIMEOUT",
            finding=("schema", 1, None, None),
        )
        add(store, 4, version="1.0", verdict="SKIP")  # in `traces`, in neither rate
    _, out = trend_json(db)
    [bucket] = out["buckets"]
    assert (bucket["traces"], bucket["judged"], bucket["scored"], bucket["passed"]) == (
        54.0,
        50.0,
        40.0,
        31.0,
    )
    assert bucket["pass_rate"] == pytest.approx(31 / 40) and bucket["success_rate"] == pytest.approx(31 / 50)
    assert (bucket["ci_low"], bucket["ci_high"]) == pytest.approx(wilson(31, 40))
    assert bucket["scored_effective"] == pytest.approx(40.0) and "judged_effective" not in bucket
    text = cli("trend", "--db", str(db)).stdout
    assert "77.5%" in text and "62.0%" in text  # pass rate, success rate


def test_trend_and_the_report_agree_on_a_suite_run(faulty_suite):
    """A real suite run with agent errors (sim:faulty retries out of 500s): the report's accuracy,
    the gate's pass rate and `trend`'s pass rate are one number. The run is the session's shared
    default run (`faulty_suite`, judged; its store only read), not a 72-case run of its own: the
    three numbers agree on any run with agent errors; `gate` and `trend` stay real processes."""
    db, run = faulty_suite
    run_id = next(line.split("=", 1)[1] for line in run.stdout.splitlines() if line.startswith("run_id="))
    report = json.loads(cli_in_process("report", run_id, "--db", str(db), "--format", "json").stdout)
    counts = report["summary"]["verdict_counts"]
    assert counts["AGENT_ERROR"] > 0  # else the two definitions could not differ
    _, out = trend_json(db)
    [bucket] = out["buckets"]
    assert bucket["pass_rate"] == pytest.approx(report["summary"]["accuracy"])
    assert bucket["success_rate"] == pytest.approx(
        counts["PASS"] / (counts["PASS"] + counts["FAIL"] + counts["AGENT_ERROR"])
    )
    floor = f"{report['summary']['accuracy'] * 100 + 0.5:.1f}%"
    gate = cli("gate", "--db", str(db), "--run", run_id, "--min-pass-rate", floor)
    assert gate.returncode == 1 and f"pass rate {report['summary']['accuracy']:.1%}" in gate.stderr
    text = cli("trend", "--db", str(db)).stdout
    assert f"{report['summary']['accuracy'] * 100:.1f}%" in text


def test_a_store_with_the_first_trend_views_gets_the_one_pass_rate_without_a_write(db):
    """A store written with 007's views (pass rate over PASS + FAIL + AGENT_ERROR) shows the
    current definition's numbers, read-only: the file is not touched (not even migrated), and a
    store the user cannot write is read the same way."""
    _store_before(db, "009_one_pass_rate")
    with duckdb.connect(str(db)) as conn:
        conn.execute("INSERT INTO traces VALUES ('ab', ?, ?, 1, 1, true, NULL, NULL, false, 'shop', '1.0', NULL, "
                     "NULL, 0)", [DAY1, DAY1])  # fmt: skip
        conn.execute("INSERT INTO traces VALUES ('cd', ?, ?, 2, 1, true, NULL, NULL, false, 'shop', '1.0', NULL, "
                     "NULL, 0)", [DAY1, DAY1])  # fmt: skip
        conn.execute("INSERT INTO trace_results (trace_id, verdict, evaluator_version, evaluated_at) VALUES "
                     "('ab', 'PASS', '3.0.0', now()), ('cd', 'AGENT_ERROR', '3.0.0', now())")  # fmt: skip
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    db.chmod(0o444)
    try:
        _, out = trend_json(db)
    finally:
        db.chmod(0o644)
    [bucket] = out["buckets"]
    assert (bucket["pass_rate"], bucket["success_rate"]) == (1.0, 0.5)
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    with duckdb.connect(str(db), read_only=True) as conn:
        applied = {name for (name,) in conn.execute("SELECT name FROM schema_migrations").fetchall()}
    assert "009_one_pass_rate" not in applied


def test_a_store_too_old_for_the_trend_views_is_one_line_saying_how_to_upgrade(db):
    """Before migration 006 a store has no `traces` table for the views to read: exit 2, one line,
    and the file untouched."""
    _store_before(db, "006_live_traces")
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    result = cli("trend", "--db", str(db))
    assert result.returncode == 2, result.stderr
    assert "predates the current trend views" in result.stderr and "traceladder evaluate" in result.stderr
    assert "Traceback" not in result.stderr and "predates" in result.stderr.strip().splitlines()[-1], (
        result.stderr
    )
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before


def test_piped_trend_wraps_its_last_column_within_120_and_never_prints_fractional_traces(db):
    """Sampled at 30%, each judged trace stands for 3.33: the counts are estimates of whole traces,
    shown as whole numbers. Piped without COLUMNS the table is 120 wide, its long last cell wrapped."""
    long_tool, long_param = "a_really_long_tool_name_that_goes_on_and_on", "a_parameter_name_that_is_long_too"
    with Store(db) as store:
        add(store, 7, version="1.0", weight=10 / 3)
        add(store, 3, version="1.0", verdict="FAIL", cls="PARAM_UNEXPECTED", weight=10 / 3,
            finding=("schema", 1, long_tool, long_param))  # fmt: skip
        add(store, 7, version="1.1-a-long-version-name", service="a-service-with-a-long-name-too",
            first_seen=DAY1 + timedelta(days=1))  # fmt: skip
        store.execute("INSERT INTO sampling (stage, rate, keep_errors) VALUES ('evaluate', 0.3, false)")
    out = cli("trend", "--db", str(db), env={"COLUMNS": ""}).stdout
    lines = out.splitlines()
    assert max(len(line) for line in lines) == 120, out
    last_cells = "".join(line.split("│")[-2].strip() for line in lines if line.startswith("│"))
    assert f"{long_tool}.{long_param}" in last_cells, out  # wrapped, not cut
    assert "40 judged trace(s)" in out, out  # 10 × 10/3 + 7 = 40.3
    counts = [line.split("│")[4:6] for line in lines if line.startswith("│") and "prod" in line]
    assert [[cell.strip() for cell in row] for row in counts] == [["7", "7"], ["33", "33"]], out
    assert "PARAM_UNEXPECTED10" in last_cells and not re.search(r"\b\d+\.\d+ scored\b", out), out
