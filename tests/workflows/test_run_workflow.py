"""The `run` workflow as one typed function (`workflows.run`), and each case judged once: the code
rungs' settlement behind the progress line is the one the evaluation after the run writes."""

from __future__ import annotations

import json
import os

from tests.conftest import ROOT, cli, out_values
from traceladder.store.db import open_store
from traceladder.workflows.run import RunRequest, run

CASES = ("fc-d1-001", "fc-d2-001", "fc-d3-001", "fc-d4-001")

# A plug-in rung that notes every trace it is asked about: how many times the ladder climbed it.
COUNTING_RUNG = """
import os
from traceladder.plugin_api.rungs import RungResult

NUMBER = 3
NAME = "counting"
NEEDS = frozenset()
SURVIVORS_ONLY = False


def evaluate(inputs, analysis):
    with open(os.environ["COUNTING_RUNG_LOG"], "a", encoding="utf-8") as log:
        log.write(inputs.trace_id + "\\n")
    return RungResult(NUMBER, NAME, "pass", {}, explanation="counted")
"""


def _counting_plugin(tmp_path):
    folder = tmp_path / "plugin"
    info = folder / "traceladder_counting_rung-0.1.dist-info"
    info.mkdir(parents=True)
    (folder / "traceladder_counting_rung.py").write_text(COUNTING_RUNG)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: traceladder-counting-rung\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[traceladder.rungs]\ncounting = traceladder_counting_rung\n")
    log = tmp_path / "climbs.log"
    path = os.pathsep.join(p for p in (str(folder), os.environ.get("PYTHONPATH", "")) if p)
    return {"PYTHONPATH": path, "COUNTING_RUNG_LOG": str(log)}, log


def _rows(db, query, env):
    result = cli("sql", query, "--db", str(db), "--json", env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_each_case_of_a_run_climbs_the_ladder_once(tmp_path):
    env, log = _counting_plugin(tmp_path)
    db = tmp_path / "store.duckdb"
    cases = [arg for case in CASES for arg in ("--case", case)]
    result = cli(
        "run", "--model", "sim:faulty", *cases, "--repeat", "2", "--db", str(db), "--rungs", "counting",
        "--no-judge", env=env,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    run_id = out_values(result)["run_id"]
    traces = [
        r["trace_id"] for r in _rows(db, f"SELECT trace_id FROM case_runs WHERE run_id = '{run_id}'", env)
    ]
    assert len(traces) == 2 * len(CASES)
    climbs = log.read_text().split()
    # once for the progress line, reused by the evaluation: never a second time
    assert sorted(climbs) == sorted(traces)
    stored = _rows(
        db, "SELECT trace_id FROM rung_results WHERE rung_name = 'counting' AND status = 'pass'", env
    )
    assert sorted(r["trace_id"] for r in stored) == sorted(traces)


def test_each_case_of_an_agent_run_climbs_the_ladder_once(tmp_path):
    # The team's own agent (`run --agent`): its progress line's settlement is reused by the
    # evaluation after the run, as for the built-in loop.
    env, log = _counting_plugin(tmp_path)
    db = tmp_path / "store.duckdb"
    cases = [arg for case in CASES[:2] for arg in ("--case", case)]
    result = cli(
        "run", "--agent", "examples.agents.plain_openai:run", "--model", "sim:oracle", *cases,
        "--repeat", "2", "--db", str(db), "--rungs", "counting", "--no-judge", env=env, cwd=ROOT,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    run_id = out_values(result)["run_id"]
    traces = [
        r["trace_id"] for r in _rows(db, f"SELECT trace_id FROM case_runs WHERE run_id = '{run_id}'", env)
    ]
    assert len(traces) == 2 * 2
    assert sorted(log.read_text().split()) == sorted(traces)
    stored = _rows(
        db, "SELECT trace_id FROM rung_results WHERE rung_name = 'counting' AND status = 'pass'", env
    )
    assert sorted(r["trace_id"] for r in stored) == sorted(traces)


def test_a_run_with_a_judge_stores_what_evaluating_it_again_stores(tmp_path):
    # The reused settlement must be the evaluation's own: the stored results of the run (the
    # simulated judge deciding rung 5 on the survivors) are exactly those `evaluate --run` writes.
    db = tmp_path / "store.duckdb"
    cases = [arg for case in CASES for arg in ("--case", case)]
    result = cli("run", "--model", "sim:faulty", *cases, "--db", str(db))
    assert result.returncode == 0, result.stderr
    run_id = out_values(result)["run_id"]
    query = (
        "SELECT t.trace_id, t.verdict, t.failure_class, t.settled_at, t.settled_by, t.explanation, "
        "t.evaluator_version, list(r.rung || ':' || r.status || ':' || coalesce(r.explanation, '') "
        "ORDER BY r.rung) AS rungs FROM trace_results t JOIN rung_results r USING (trace_id) "
        "GROUP BY ALL ORDER BY 1"
    )
    after_run = _rows(db, query, None)
    findings = _rows(db, "SELECT trace_id, rung, code, message FROM findings ORDER BY ALL", None)
    assert {r["verdict"] for r in after_run} >= {"PASS", "FAIL"}
    assert any("judge" in str(r["rungs"]) for r in after_run)
    again = cli("evaluate", "--db", str(db), "--run", run_id, "--no-cache")  # not "(cached)" in rung 5
    assert again.returncode == 0, again.stderr
    assert _rows(db, query, None) == after_run
    assert _rows(db, "SELECT trace_id, rung, code, message FROM findings ORDER BY ALL", None) == findings


def test_the_run_workflow_takes_a_typed_request(tmp_path):
    db = tmp_path / "store.duckdb"
    with open_store(db) as store:
        result = run(store, RunRequest(model="sim:oracle", case_ids=CASES[:2]))
        assert result.summary.status == "complete" and result.summary.finished == 2
        assert result.evaluation is not None and result.evaluation.units == 2
        assert result.report is not None and result.report["run"]["run_id"] == result.summary.run_id
        assert result.report_path is not None and result.report_path.exists()
        assert result.nothing_measured is None
        # --no-report: run only, nothing judged
        bare = run(store, RunRequest(model="sim:oracle", case_ids=CASES[:1], evaluate=False))
        assert bare.evaluation is None and bare.report is None and bare.report_path is None
        assert bare.summary.status == "complete"


def test_the_evaluate_workflow_takes_a_typed_request(tmp_path):
    from traceladder.evaluate.judge.choice import JudgeRequest
    from traceladder.workflows.evaluate import EvaluateRequest, evaluate

    db = tmp_path / "store.duckdb"
    with open_store(db) as store:
        first = run(store, RunRequest(model="sim:oracle", case_ids=CASES[:2], evaluate=False))
    run_id = first.summary.run_id
    result = evaluate(db, EvaluateRequest(run_id=run_id, judge=JudgeRequest(off=True)))
    assert result.summary.units == 2 and result.summary.runs == (run_id,)
    assert result.summary.judge is None and result.source is None and result.warnings == ()
    # the same traces through the sharded path, the store itself as the source
    sharded = evaluate(db, EvaluateRequest(run_id=run_id, shards=2, judge=JudgeRequest(off=True)))
    assert sharded.shards == 2 and sharded.spans and sharded.summary.verdicts == result.summary.verdicts
