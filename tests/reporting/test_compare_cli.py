"""`traceladder compare RUN_A RUN_B`, the leaderboard (`report --runs`) and the paired section of
`report --format html --compare`, through the real CLI on simulated models (issue 25, point 5).

Eight cases: sim:faulty (seed 0) fails six of them — five FAILs and one AGENT_ERROR — and passes
two; sim:oracle passes all eight. So B = faulty against A = oracle has b = 6, c = 0 and
p = 2 / 2^6 = 0.03125: significantly worse at alpha 0.05, not at 0.03."""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import ROOT, cli, rows

FAILING = ["fc-d1-002", "fc-d1-003", "fc-d2-001", "fc-d2-002", "fc-d4-003", "fc-d3-005"]
PASSING = ["fc-d1-005", "fc-d2-005"]
CASES = [a for c in FAILING + PASSING for a in ("--case", c)]


def _run_id(result) -> str:
    assert result.returncode == 0, result.stderr
    return re.search(r"^run_id=(\S+)$", result.stdout, re.M).group(1)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("compare")
    db = folder / "store.duckdb"

    def run(*args):
        return _run_id(cli("run", "--db", str(db), *CASES, *args))

    ids = {
        "oracle": run("--model", "sim:oracle"),
        "oracle2": run("--model", "sim:oracle"),
        "faulty": run("--model", "sim:faulty", "--seed", "0"),
        "faulty1": run("--model", "sim:faulty", "--seed", "1"),
    }
    # The same cases written differently: another file, another case hash — another suite.
    suite = (
        (ROOT / "traceladder" / "suite" / "domain" / "retail" / "data" / "retail_fc.jsonl")
        .read_text()
        .splitlines()
    )
    other = folder / "respaced.jsonl"
    other.write_text(
        "".join(json.dumps(json.loads(line), indent=None, sort_keys=True) + "\n" for line in suite)
    )
    ids["other_suite"] = _run_id(
        cli("run", "--db", str(db), "--case", "fc-d1-002", "--model", "sim:oracle", "--cases", str(other))
    )
    return db, ids


def _compare(db, *args):
    return cli("compare", *args, "--db", str(db))


def _verdicts(db, run_id):
    return dict(rows(db, f"SELECT case_id, verdict FROM trace_results WHERE run_id = '{run_id}'"))


def test_faulty_is_significantly_worse_than_oracle(store):
    db, ids = store
    faulty = _verdicts(db, ids["faulty"])
    assert {c for c, v in faulty.items() if v != "PASS"} == set(FAILING), faulty  # the premise
    done = _compare(db, ids["oracle"], ids["faulty"], "--format", "json")
    assert done.returncode == 1, done.stderr
    cmp = json.loads(done.stdout)
    t = cmp["mcnemar"]
    assert (t["b"], t["c"], t["both_pass"], t["both_fail"]) == (6, 0, 2, 0)
    assert t["p_value"] == 0.03125 and t["conclusion"] == "B is significantly worse than A"
    assert cmp["differs"] == ["model"] and cmp["paired_cases"] == 8
    assert sorted(f["case_id"] for f in cmp["flips"]) == sorted(FAILING)
    assert all(f["direction"] == "regressed" for f in cmp["flips"])
    # each flip carries the failing side's evidence, as stored
    stored = dict(
        rows(db, f"SELECT case_id, failure_class FROM trace_results WHERE run_id = '{ids['faulty']}'")
    )
    for flip in cmp["flips"]:
        assert flip["evidence"]["failure_class"] == stored[flip["case_id"]]
    d3 = next(f for f in cmp["flips"] if f["case_id"] == "fc-d3-005")
    assert d3["evidence"]["verdict"] == "AGENT_ERROR"  # an agent error is a case B did not pass
    classes = {c["failure_class"]: c["b"] for c in cmp["classes"]}
    assert classes["AGENT_ERROR"] == 1 and sum(classes.values()) == 6
    rates = {r["dimension"]: r for r in cmp["dimensions"]}
    assert (rates["all"]["b"]["passed"], rates["all"]["b"]["scored"]) == (
        2,
        7,
    )  # the report's PASS / (PASS + FAIL)
    assert rates["D1"]["regressed"] == 2 and rates["D3"]["regressed"] == 1


def test_text_output_states_the_test_and_the_flips(store):
    db, ids = store
    done = _compare(db, ids["oracle"], ids["faulty"])
    assert done.returncode == 1 and done.stderr == ""
    out = done.stdout
    assert "b=6 (A pass, B fail), c=0 (A fail, B pass)" in out and "p=0.03125" in out
    assert "conclusion: B is significantly worse than A" in out
    assert re.search(r"fc-d1-002 +D1 +PASS → FAIL +PARAM_HALLUCINATED_ID", out)
    assert re.search(r"^D1 tool selection +100\.0% \(3/3\) \[43\.8%, 100\.0%\] +33\.3% \(1/3\)", out, re.M)
    # a stricter alpha: the same numbers, not significant, exit 0
    strict = _compare(db, ids["oracle"], ids["faulty"], "--alpha", "0.03")
    assert strict.returncode == 0 and "conclusion: no significant difference" in strict.stdout


def test_better_candidate_exits_0(store):
    db, ids = store
    done = _compare(db, ids["faulty"], ids["oracle"], "--format", "json")
    assert done.returncode == 0, done.stderr
    t = json.loads(done.stdout)["mcnemar"]
    assert (t["b"], t["c"]) == (0, 6) and t["conclusion"] == "B is significantly better than A"


def test_run_groups_pair_on_all_k_trials(store):
    db, ids = store
    seed1 = _verdicts(db, ids["faulty1"])
    seed0 = _verdicts(db, ids["faulty"])
    fails_either = {c for c in seed0 if seed0[c] != "PASS" or seed1[c] != "PASS"}
    group_a = f"{ids['oracle']},{ids['oracle2']}"
    group_b = f"{ids['faulty']},{ids['faulty1']}"
    done = _compare(db, group_a, group_b, "--format", "json")
    cmp = json.loads(done.stdout)
    assert cmp["k"] == [2] and cmp["a"]["runs"] == [ids["oracle"], ids["oracle2"]]
    assert cmp["mcnemar"]["b"] == len(fails_either) and cmp["mcnemar"]["both_pass"] == 8 - len(fails_either)
    assert done.returncode == (1 if len(fails_either) >= 6 else 0)
    # one trial on B: only A's first trial is compared (k = 1)
    single = json.loads(_compare(db, group_a, ids["faulty"], "--format", "json").stdout)
    assert single["k"] == [1] and single["mcnemar"]["b"] == 6


def test_not_comparable_and_bad_usage_exit_2(store, tmp_path):
    db, ids = store
    cases = [
        ((ids["oracle"], ids["other_suite"]), "not comparable: different case hash"),
        ((ids["oracle"], ids["oracle"]), "named more than once"),
        ((ids["oracle"], "run-nope"), "no run run-nope"),
        ((f"{ids['oracle']},{ids['faulty']}", ids["faulty1"]), "side A mixes runs"),
        ((ids["oracle"], ids["faulty"], "--alpha", "1.5"), "between 0 and 1"),
        ((ids["oracle"], ids["faulty"], "--alpha", "nan"), "between 0 and 1"),
        ((f"{ids['oracle']},", ids["faulty"]), "separated by commas"),
    ]
    for args, says in cases:
        done = _compare(db, *args)
        assert done.returncode == 2 and says in done.stderr, (args, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_output_file_holds_the_json(store, tmp_path):
    db, ids = store
    out = tmp_path / "cmp.json"
    done = _compare(db, ids["oracle"], ids["faulty"], "--output", str(out))
    assert done.returncode == 1 and f"comparison_path={out}" in done.stdout
    assert json.loads(out.read_text())["mcnemar"]["p_value"] == 0.03125


def test_html_compare_shows_the_same_numbers(store, tmp_path):
    db, ids = store
    cmp = json.loads(_compare(db, ids["oracle"], ids["faulty"], "--format", "json").stdout)
    page = tmp_path / "p.html"
    done = cli("report", ids["faulty"], "--db", str(db), "--format", "html", "--compare", ids["oracle"],
               "--out", str(page))  # fmt: skip
    assert done.returncode == 0, done.stderr
    html = page.read_text(encoding="utf-8")
    t = cmp["mcnemar"]
    assert f'<b id="mcnemar-b">{t["b"]}</b>' in html and f'<b id="mcnemar-c">{t["c"]}</b>' in html
    assert f'<b id="mcnemar-p">{t["p_value"]:.4g}</b>' in html
    assert f'<b id="mcnemar-conclusion">{t["conclusion"]}</b>' in html
    assert 'id="paired-classes"' in html and html.count("PASS → FAIL") >= len(cmp["flips"])
    # runs of different suites: the page still renders, without a paired test
    other = cli("report", ids["oracle"], "--db", str(db), "--format", "html", "--compare", ids["other_suite"],
                "--out", str(tmp_path / "o.html"))  # fmt: skip
    assert other.returncode == 0 and 'id="mcnemar"' not in (tmp_path / "o.html").read_text()


def test_leaderboard_over_runs_of_one_suite(store):
    db, ids = store
    runs = [ids["faulty"], ids["oracle"], ids["faulty1"]]
    done = cli("report", "--runs", *runs, "--db", str(db), "--format", "json")
    assert done.returncode == 0, done.stderr
    board = json.loads(done.stdout)
    top = board["rows"][0]
    assert top["run_id"] == ids["oracle"] and top["rank"] == 1 and top["rate"] == 1.0
    assert board["dimensions"] == ["D1", "D2", "D3", "D4"]
    assert board["dimension_names"] == {
        "D1": "tool selection", "D2": "parameter fill", "D3": "when to call", "D4": "request/confirm chains"}  # fmt: skip
    faulty = next(r for r in board["rows"] if r["run_id"] == ids["faulty"])
    assert (faulty["passed"], faulty["scored"], faulty["agent_errors"]) == (2, 7, 1)
    assert faulty["dimensions"]["D1"]["rate"] == pytest.approx(1 / 3)
    tokens, n = rows(db, f"SELECT sum(input_tokens) + sum(output_tokens), count(*) FROM case_runs "
                         f"WHERE run_id = '{ids['faulty']}'")[0]  # fmt: skip
    assert faulty["tokens_per_case"] == pytest.approx(tokens / n) and faulty["cost_per_case_usd"] == 0.0
    low, high = faulty["interval"]
    assert low == pytest.approx(0.0822, abs=1e-3) and high == pytest.approx(0.6411, abs=1e-3)  # Wilson 2/7
    text = cli("report", "--runs", *runs, "--db", str(db))
    assert text.returncode == 0 and re.search(r"^ 1 sim:oracle .* 100\.0%", text.stdout, re.M)
    assert "28.6%" in text.stdout and "tokens/case" in text.stdout
    assert "D1 tool selection; D2 parameter fill; D3 when to call; D4 request/confirm chains" in text.stdout


def test_leaderboard_refusals_exit_2(store):
    db, ids = store
    for args, says in (
        (("--runs", ids["oracle"], ids["other_suite"]), "different case hash"),
        (("--runs", ids["oracle"]), "at least two runs"),
        (("--runs", ids["oracle"], ids["faulty"], "--format", "junit"), "text or json"),
        (
            ("--runs", ids["oracle"], ids["faulty"], "--compare", ids["faulty1"]),
            "--compare needs --format html",
        ),
        ((ids["oracle"], "--runs", ids["oracle"], ids["faulty"]), "drop RUN_ID"),
        (("--prices", "p.toml"), "--prices applies to --runs only"),
    ):
        done = cli("report", *args, "--db", str(db))
        assert done.returncode == 2 and says in done.stderr, (args, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1


def test_runs_with_no_case_in_common_are_not_compared(tmp_path):
    """Two runs of the same suite that share no case: "0/0 … no significant difference" would be a
    verdict on nothing; it is exit 2, one line."""
    db = tmp_path / "store.duckdb"
    a = _run_id(cli("run", "--db", str(db), "--case", "fc-d1-002", "--model", "sim:oracle"))
    b = _run_id(cli("run", "--db", str(db), "--case", "fc-d2-005", "--model", "sim:oracle"))
    done = _compare(db, a, b)
    assert done.returncode == 2, done.stdout
    assert done.stderr.strip() == (
        "traceladder: not compared: the runs have no scored case in common "
        "(A ran 1, B ran 1 other cases, 0 without a scored trial on both sides)"
    )
