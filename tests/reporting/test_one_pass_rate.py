"""One pass rate (issue 36 point 4): `gate` and `report` read the same definition — PASS / (PASS +
FAIL) over every judged trace of the run (docs/report-contract.md) — on a store with a partial
run, repeats, AGENT_ERROR, SKIP and NOT_EVALUATED, and judged traces that share a (case, repeat).

The gate used to collapse a run's results into a map keyed (case, repeat): traces sharing a key
counted once, and its pass rate differed from the report's on the same store.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb
import pytest
from conftest import cli, out_values


def _gate(db: Path, run_id: str, tmp_path: Path) -> tuple[str, dict[str, int]]:
    """The gate's pass_rate step output and the verdict counts of its markdown summary."""
    outputs, summary = tmp_path / "out.txt", tmp_path / "summary.md"
    outputs.unlink(missing_ok=True)
    summary.unlink(missing_ok=True)
    env = {"GITHUB_OUTPUT": str(outputs), "GITHUB_STEP_SUMMARY": str(summary)}
    done = cli("gate", "--db", str(db), "--run", run_id, "--min-pass-rate", "0", "--allow-partial", env=env)
    assert done.returncode == 0, done.stderr
    rate = dict(line.split("=", 1) for line in outputs.read_text().splitlines())["pass_rate"]
    counts = {v: int(n) for v, n in re.findall(r"^\| ([A-Z_]+) \| (\d+) \|$", summary.read_text(), re.M)}
    return rate, counts


def _report(db: Path, run_id: str) -> dict:
    done = cli("report", run_id, "--db", str(db), "--format", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A real run (repeats; the faulty model gives PASS, FAIL and AGENT_ERROR), made partial (it
    stopped before its last cases), plus judged traces tagged with the run that no case run
    records: a SKIP, a NOT_EVALUATED, and two that share a (case, repeat) with the run's own —
    what an external harness sending spans under the run's id leaves."""
    db = tmp_path_factory.mktemp("one-rate") / "store.duckdb"
    cases = ("fc-d1-002", "fc-d1-009", "fc-d3-005", "fc-d2-004")
    done = cli("run", "--db", str(db), "--model", "sim:faulty", "--repeat", "2", "--no-report",
               *[a for c in cases for a in ("--case", c)])  # fmt: skip
    assert done.returncode == 0, done.stderr
    run_id = out_values(done)["run_id"]
    assert cli("evaluate", "--db", str(db)).returncode == 0
    con = duckdb.connect(str(db))
    try:
        con.execute("UPDATE runs SET status = 'interrupted', cases_total = cases_total + 2")
        copies = [("SKIP", "fc-d1-002", 0), ("NOT_EVALUATED", "fc-d1-009", 1), ("PASS", "fc-d3-005", 0),
                  ("PASS", "fc-d3-005", 0), ("FAIL", None, 0)]  # fmt: skip
        for k, (verdict, case_id, repeat) in enumerate(copies):
            judged = verdict in ("PASS", "FAIL")  # a copy of a row with that verdict; else unjudged
            con.execute(
                "INSERT INTO trace_results SELECT * REPLACE (printf('%032x', 900 + $k) AS trace_id,"
                " $verdict AS verdict, $case AS case_id, $repeat AS repeat_index,"
                " CASE WHEN $judged THEN failure_class END AS failure_class,"
                " CASE WHEN $judged THEN settled_at END AS settled_at,"
                " CASE WHEN $judged THEN settled_by END AS settled_by,"
                " CASE WHEN $judged THEN evidence ELSE '{}' END AS evidence)"
                " FROM trace_results WHERE run_id = $run AND (NOT $judged OR verdict = $verdict)"
                " ORDER BY trace_id LIMIT 1",
                {
                    "k": k,
                    "verdict": verdict,
                    "case": case_id,
                    "repeat": repeat,
                    "judged": judged,
                    "run": run_id,
                },
            )
        verdicts = dict(con.execute("SELECT verdict, count(*) FROM trace_results GROUP BY 1").fetchall())
    finally:
        con.close()
    assert {"PASS", "FAIL", "AGENT_ERROR", "SKIP", "NOT_EVALUATED"} <= set(verdicts), verdicts
    return db, run_id


def test_gate_and_report_read_one_pass_rate(store, tmp_path):
    db, run_id = store
    report = _report(db, run_id)
    summary = report["summary"]
    rate, counts = _gate(db, run_id, tmp_path)
    assert rate == f"{summary['accuracy']:.4f}"
    assert counts == summary["verdict_counts"]
    # the definition the report documents: every judged trace, PASS / (PASS + FAIL)
    assert summary["case_count"] == len(report["results"]) == sum(counts.values())
    passed = sum(r["verdict"] == "PASS" for r in report["results"])
    scored = sum(r["verdict"] in ("PASS", "FAIL") for r in report["results"])
    assert summary["accuracy"] == passed / scored
