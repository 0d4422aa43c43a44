"""Trust under misuse (issue 9, points 3–8, 10, 11): the read-only SQL that cannot write, secrets
that never reach a file, a gate that needs complete evidence, a full disk that loses nothing,
XML that always parses, stores that are not ours left alone, output safe for terminals and pipes.
"""

from __future__ import annotations

import json
import os
import re
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import duckdb
import pytest
from shared_suites import built_once, digest, session_folder

from tests.conftest import ROOT, as_foreground, cli, cli_in_process, out_value, rows
from tests.scripted_server import ModelServer, chat_reply

SECRET_PASSWORD = "pw-SECRET-1234"
SECRET_QUERY = "qk-SECRET-5678"


def one_line_error(result, code=2):
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.strip().splitlines() if not re.match(r"^\[\d+/\d+\] ", line)]
    assert len(lines) == 1, result.stderr  # progress lines aside, exactly one line
    return lines[0]


@pytest.fixture(scope="module")
def small_store(tmp_path_factory):
    """A store with one complete, evaluated 4-case sim:faulty run."""
    db = tmp_path_factory.mktemp("small") / "s.duckdb"
    result = cli_in_process(
        "run",
        "--db",
        str(db),
        "--model",
        "sim:faulty",
        *_cases("fc-d1-001", "fc-d2-004", "fc-d3-001", "fc-d4-001"),
    )
    assert result.returncode == 0, result.stderr
    return db, out_value(result, "run_id")


def _cases(*ids):
    return [arg for case_id in ids for arg in ("--case", case_id)]


# -- 3. sql cannot write ------------------------------------------------------------------------


def test_sql_cannot_write_files_by_any_statement(small_store, tmp_path):
    db, _ = small_store
    victim = tmp_path / "victim.duckdb"
    victim.write_bytes(b"precious")
    imports = tmp_path / "dump"
    imports.mkdir()
    (imports / "schema.sql").write_text(f"COPY (SELECT 1) TO '{victim}';\n")
    (imports / "load.sql").write_text("")
    attacks = [
        f"EXPLAIN ANALYZE COPY (SELECT 42) TO '{victim}'",
        f"IMPORT DATABASE '{imports}'",
        f"SET log_query_path = '{tmp_path / 'log.txt'}'",
        f"COPY (SELECT 1) TO '{tmp_path / 'out.csv'}' (USE_TMP_FILE false)",
        f"ATTACH '{tmp_path / 'other.duckdb'}'",
        "SET enable_external_access = true",
        "DELETE FROM findings",
    ]
    for statement in attacks:
        line = one_line_error(cli("sql", statement, "--db", str(db)))
        assert "read-only" in line, (statement, line)
    assert victim.read_bytes() == b"precious"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dump", "victim.duckdb"]
    assert sorted(p.name for p in imports.iterdir()) == ["load.sql", "schema.sql"]


def test_sql_reads_local_files_given_with_file_and_nothing_else(small_store, tmp_path):
    db, _ = small_store
    labels = tmp_path / "labels.csv"
    labels.write_text("case_id,owner\nfc-d1-001,ana\nfc-d4-001,bo\n")
    result = cli("sql", "SELECT l.owner, c.verdict FROM labels l JOIN case_results c USING (case_id) ORDER BY 1",
                 "--file", f"labels={labels}", "--db", str(db), "--json")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert [r["owner"] for r in json.loads(result.stdout)] == ["ana", "bo"]
    line = one_line_error(cli("sql", f"SELECT * FROM read_csv('{labels}')", "--db", str(db)))
    assert "read-only" in line  # a path in the query is not reachable, even a file given with --file


def test_pivot_is_one_statement(small_store):
    db, _ = small_store
    result = cli(
        "sql", "PIVOT case_results ON verdict USING count(*) GROUP BY dimension", "--db", str(db), "--csv"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0].startswith("dimension")


# -- 4. credentials in --base-url --------------------------------------------------------------


def test_credentials_in_the_base_url_never_reach_a_row_a_report_or_a_baseline(tmp_path):
    server = ModelServer()
    db = tmp_path / "c.duckdb"
    with server:
        url = server.url.replace("http://", f"http://user:{SECRET_PASSWORD}@") + f"?api-key={SECRET_QUERY}"
        runs = []
        for _ in range(3):
            result = cli("run", "--model", "m", "--base-url", url, "--db", str(db), *_cases("fc-d1-001", "fc-d1-004"),
                         env={"OPENAI_API_KEY": "k"})  # fmt: skip
            assert result.returncode == 0, result.stderr
            runs.append(out_value(result, "run_id"))
        assert all(p.endswith(f"?api-key={SECRET_QUERY}") for p in server.paths)  # requests use the full URL
        consistency = tmp_path / "consistency.json"
        review = tmp_path / "review.json"
        assert cli("consistency", *runs, "--db", str(db), "--output", str(consistency)).returncode == 0
        assert (
            cli("baseline", "review-template", runs[0], "--db", str(db), "--output", str(review)).returncode
            == 0
        )
        locked = cli("baseline", "lock", "--canonical", runs[0], "--consistency", str(consistency), "--review",
                     str(review), "--output", str(tmp_path / "baseline.json"), "--db", str(db))  # fmt: skip
        assert locked.returncode == 0, locked.stderr
    config = json.loads(rows(db, "SELECT config FROM runs LIMIT 1")[0][0])
    assert config["base_url"].endswith("/v1?api-key=REDACTED") and "user" not in config["base_url"]
    for path in [*tmp_path.rglob("*"), ROOT / "reports"]:
        if path.is_file():
            data = path.read_bytes()
            assert SECRET_PASSWORD.encode() not in data and SECRET_QUERY.encode() not in data, path


def test_resume_needs_the_credentialed_url_again_and_refuses_another_endpoint(evidence, tmp_path):
    """The session's interrupted sim:faulty run (`evidence`), on a copy of its store: a resume with
    flags other than the run's own is refused."""
    db = tmp_path / "r.duckdb"
    shutil.copyfile(evidence[0], db)
    run_id = evidence[1]
    assert rows(db, "SELECT status FROM runs WHERE run_id = ?", [run_id]) == [("interrupted",)]
    for flags, needle in [
        (["--model", "sim:oracle"], "used model 'sim:faulty'"),
        (["--case", "fc-d1-001"], "drop --case"),
        (["--repeat", "2"], "drop --repeat"),
        (["--seed", "3"], "drop --seed"),
        (["--base-url", "http://127.0.0.1:9/v1"], "not the endpoint"),
    ]:
        line = one_line_error(cli("run", "--resume", run_id, "--db", str(db), "--no-report", *flags))
        assert needle in line, (flags, line)


def _slow_run(db, until, *extra):
    proc = subprocess.Popen(
        [sys.executable, "-m", "traceladder", "run", "--model", "sim:faulty", "--db", str(db), "--sim-delay", "0.05",
         "--concurrency", "2", "--no-report", *extra],
        cwd=ROOT, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True, preexec_fn=as_foreground,
        env={k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"},
    )  # fmt: skip
    assert proc.stderr is not None
    for line in proc.stderr:
        if line.startswith(until):
            break
    return proc


# -- 5 & 6. complete evidence for the gate, consistency and baselines ---------------------------


@pytest.fixture(scope="session")
def evidence(tmp_path_factory):
    """An interrupted full run, a complete D1-only run and two complete D2-only runs, in one store,
    built once per test session (tests/shared_suites.py) and only read by the tests here; the
    teardown checks nobody wrote to it. The two repetitions need to be complete runs of one
    selection other than D1's, not the whole suite: 18 cases each show what 72 did. The
    runs are evaluated by one `evaluate` at the end: the tests read the store, not reports."""
    folder = session_folder(tmp_path_factory) / "hardening-evidence"
    db = folder / "e.duckdb"

    def build():
        proc = _slow_run(db, "[3/72]")
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
        (interrupted,) = rows(db, "SELECT run_id FROM runs")[0]
        d1 = cli_in_process("run", "--db", str(db), "--dimension", "D1", "--no-report")
        d2 = [
            cli_in_process("run", "--db", str(db), "--dimension", "D2", "--seed", str(seed), "--no-report")
            for seed in (0, 1)
        ]
        assert d1.returncode == 0 and all(r.returncode == 0 for r in d2)
        assert cli_in_process("evaluate", "--db", str(db)).returncode == 0  # every run, once
        return {"interrupted": interrupted, "d1": out_value(d1, "run_id"),
                "d2": [out_value(r, "run_id") for r in d2], "sha256": digest(db)}  # fmt: skip

    built = built_once(folder, build)
    yield db, built["interrupted"], built["d1"], built["d2"]
    assert digest(db) == built["sha256"], f"a test wrote to the shared store {db}"


def test_the_gate_refuses_incomplete_evidence(evidence, tmp_path):
    db, interrupted, d1, d2 = evidence
    baseline = str(ROOT / "baselines" / "sim-faulty.json")
    line = one_line_error(cli("gate", "--db", str(db), "--run", interrupted, "--min-pass-rate", "0.1"))
    assert "not gated" in line and "interrupted" in line and "--resume" in line
    line = one_line_error(
        cli("gate", "--db", str(db), "--run", interrupted, "--baseline", baseline, "--max-drop", "1")
    )
    assert "not gated" in line
    line = one_line_error(
        cli("gate", "--db", str(db), "--run", d1, "--baseline", baseline, "--max-drop", "1")
    )
    assert "does not cover 54 of the baseline's cases" in line
    loud = cli("gate", "--db", str(db), "--run", interrupted, "--min-pass-rate", "0.0", "--allow-partial")
    assert loud.returncode == 0 and "WARNING: --allow-partial" in loud.stderr
    line = one_line_error(cli("gate", "--db", str(db), "--run", "", "--min-pass-rate", "0.5"))
    assert "run id cannot be empty" in line


def test_consistency_and_lock_need_distinct_complete_runs_of_one_selection(evidence, tmp_path):
    db, interrupted, d1, d2 = evidence
    line = one_line_error(cli("consistency", d2[0], d2[0], d2[0], "--db", str(db)))
    assert "listed more than once" in line
    line = one_line_error(cli("consistency", d2[0], d2[1], interrupted, "--db", str(db)))
    assert "interrupted" in line
    line = one_line_error(cli("consistency", d2[0], d2[1], d1, "--db", str(db)))
    assert "different selections" in line
    # A hand-made record that lists one run three times is refused by the lock, too.
    record = tmp_path / "c.json"
    record.write_text(json.dumps({"runs": [d2[0]] * 3, "per_case": {}}))
    review = tmp_path / "r.json"
    assert cli("baseline", "review-template", d2[0], "--db", str(db), "--output", str(review)).returncode == 0
    line = one_line_error(cli("baseline", "lock", "--canonical", d2[0], "--consistency", str(record), "--review",
                              str(review), "--output", str(tmp_path / "b.json"), "--db", str(db)))  # fmt: skip
    assert "listed more than once" in line
    assert not (tmp_path / "b.json").exists()


# -- 7. a full disk loses nothing --------------------------------------------------------------


def _file_size_limit(limit):
    def apply():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail with EFBIG instead
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def test_a_failed_span_write_stops_the_run_and_resume_completes_it(tmp_path):
    db = tmp_path / "f.duckdb"
    assert cli_in_process("run", "--db", str(db), "--case", "fc-d1-001", "--no-report").returncode == 0
    # RLIMIT_FSIZE caps every file this process writes: the WAL of a few cases fits, the rest
    # does not (the store's main file is not written until a checkpoint). D1's 18 cases are
    # enough to cross the cap (about 8 are recorded first) and cost a quarter of the suite's 72.
    limit = 300_000
    result = subprocess.run(
        [sys.executable, "-m", "traceladder", "run", "--model", "sim:faulty", "--db", str(db), "--no-report",
         "--concurrency", "2", "--dimension", "D1"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, preexec_fn=_file_size_limit(limit),
        env={k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"},
    )  # fmt: skip
    line = one_line_error(result)
    assert "could not write to the store" in line and "--resume" in line
    run_id = line.split("--resume ")[1].rstrip("`")
    # Every case recorded as finished has its whole trace; the run is not called complete.
    recorded = rows(db, "SELECT count(*) FROM case_runs WHERE run_id = ?", [run_id])[0][0]
    assert 0 < recorded < 18
    orphans = rows(db, "SELECT count(*) FROM case_runs cr WHERE run_id = ? AND NOT EXISTS (SELECT 1 FROM spans s "
                        "WHERE s.trace_id = cr.trace_id AND s.operation = 'invoke_agent')", [run_id])  # fmt: skip
    assert orphans == [(0,)]
    resumed = cli("run", "--resume", run_id, "--db", str(db))
    assert resumed.returncode == 0, resumed.stderr
    assert rows(db, "SELECT status, cases_total FROM runs WHERE run_id = ?", [run_id]) == [("complete", 18)]
    report = json.loads(
        cli_in_process("report", run_id, "--db", str(db), "--format", "json").stdout
    )  # read-back
    assert report["summary"]["case_count"] == 18


# -- 8. JUnit is always XML ---------------------------------------------------------------------

HOSTILE = "get\x1b[31m_order\x00\x07\ud800"


def test_junit_stays_well_formed_with_hostile_tool_names_and_text(tmp_path):
    def hostile(body):
        if sum(m["role"] == "assistant" for m in body["messages"]):
            return chat_reply({"role": "assistant", "content": "done \x1b]0;pwned\x07 \x00"})
        call = {
            "id": "c\x1b1",
            "type": "function",
            "function": {"name": HOSTILE, "arguments": '{"order_id": "W441\\u0000"}'},
        }
        return chat_reply({"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls")

    server = ModelServer(override=hostile)
    db = tmp_path / "x.duckdb"
    with server:
        result = cli("run", "--model", "m", "--base-url", server.url, "--db", str(db), *_cases("fc-d1-001", "fc-d1-004"),
                     env={"OPENAI_API_KEY": "k"})  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stdout and "\x00" not in result.stdout  # the terminal report is safe too
    junit = cli("report", "--db", str(db), "--format", "junit").stdout
    root = ET.fromstring(junit.encode())  # raises on any character XML forbids
    failures = root.findall(".//failure")
    assert len(failures) == 2 and "\\x1b" in failures[0].text
    gate = cli("gate", "--db", str(db), "--min-pass-rate", "0", "--junit", str(tmp_path / "j.xml"))
    assert gate.returncode == 0, gate.stderr
    ET.parse(tmp_path / "j.xml")


# -- 10. stores that are not ours ---------------------------------------------------------------


def test_an_unrelated_duckdb_file_is_left_alone(tmp_path):
    other = tmp_path / "analytics.duckdb"
    with duckdb.connect(str(other)) as conn:
        conn.execute("CREATE TABLE sales (id INT)")
    before = other.read_bytes()
    for args in (["evaluate"], ["run", "--case", "fc-d1-001"], ["sql", "SELECT 1"], ["report"]):
        line = one_line_error(cli(*args, "--db", str(other)))
        assert "another program" in line and "sales" in line, (args, line)
    assert other.read_bytes() == before
    assert rows(other, "SELECT table_name FROM information_schema.tables") == [("sales",)]


def test_an_empty_duckdb_file_is_not_read_as_a_store(tmp_path):
    empty = tmp_path / "empty.duckdb"
    duckdb.connect(str(empty)).close()
    for args in (["sql", "SELECT 1"], ["report"], ["gate", "--min-pass-rate", "0"]):
        line = one_line_error(cli(*args, "--db", str(empty)))
        assert "empty DuckDB file" in line, (args, line)


def test_a_foreign_schema_migrations_table_is_one_line(tmp_path):
    """Another program's `schema_migrations` (a common name) with other columns: refused in one
    line by readers and writers alike, the file untouched."""
    other = tmp_path / "rails.duckdb"
    with duckdb.connect(str(other)) as conn:
        conn.execute("CREATE TABLE schema_migrations (version VARCHAR)")
    before = other.read_bytes()
    for args in (["sql", "SELECT 1"], ["evaluate"], ["run", "--case", "fc-d1-001"]):
        line = one_line_error(cli(*args, "--db", str(other)))
        assert "another program" in line and "schema_migrations" in line, (args, line)
    assert other.read_bytes() == before


def test_a_store_from_a_newer_traceladder_is_refused(small_store, tmp_path):
    db = tmp_path / "newer.duckdb"
    shutil.copy(small_store[0], db)
    with duckdb.connect(str(db)) as conn:
        conn.execute("INSERT INTO schema_migrations (name) VALUES ('999_from_the_future')")
    for args in (["evaluate"], ["sql", "SELECT 1"]):
        line = one_line_error(cli(*args, "--db", str(db)))
        assert "newer traceladder" in line and "999_from_the_future" in line


# -- 11. terminals, JSON and pipes --------------------------------------------------------------


def test_sql_output_is_safe_for_terminals_and_json_is_json(small_store):
    db, _ = small_store
    table = cli("sql", "SELECT 'a' || chr(27) || '[2J' || chr(155) || '[bold]x[/bold]' AS v", "--db", str(db))
    assert table.returncode == 0
    assert "\x1b" not in table.stdout and "\x9b" not in table.stdout and "\\x1b[2J" in table.stdout
    assert "[bold]x[/bold]" in table.stdout  # data is not rich markup
    as_json = cli("sql", "SELECT 'NaN'::DOUBLE AS a, 'inf'::DOUBLE AS b, 1.5 AS c", "--db", str(db), "--json")
    assert json.loads(as_json.stdout) == [{"a": None, "b": None, "c": 1.5}]
    assert "NaN" not in as_json.stdout and "Infinity" not in as_json.stdout


def test_a_closed_pipe_is_not_an_error(small_store):
    db, _ = small_store
    for command in (["report"], ["sql", "SELECT * FROM range(100000)"], ["report", "--format", "json"]):
        shell = f"{sys.executable} -m traceladder {shlex.join(command)} --db {db} | head -2"
        done = subprocess.run(
            ["bash", "-o", "pipefail", "-c", shell], cwd=ROOT, capture_output=True, text=True
        )
        assert done.returncode == 0 and done.stderr == "", (command, done.stderr)
        assert len(done.stdout.splitlines()) == 2


def test_output_paths_never_replace_a_device(small_store):
    """As root, renaming a temp file over /dev/full would replace the device; it must be written in
    place (and fail with one line)."""
    db, run_id = small_store
    line = one_line_error(cli("report", run_id, "--db", str(db), "--format", "json", "--output", "/dev/full"))
    assert "/dev/full" in line and "No space left on device" in line
    assert Path("/dev/full").is_char_device()
