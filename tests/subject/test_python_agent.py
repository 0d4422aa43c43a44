"""`run --agent MODULE:FUNCTION` through the real CLI: the team's Python agent is the run's
subject, its tool calls and its own spans land in each case's trace, the full ladder judges it."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import ROOT, cli, out_value, rows

AGENTS = Path(__file__).parent / "agents"
PLAIN = str(ROOT / "examples" / "agents" / "plain_openai.py") + ":run"


def test_plain_openai_agent_runs_the_shipped_suite_judged_by_the_full_ladder(tmp_path: Path) -> None:
    db = tmp_path / "a.duckdb"
    done = cli("run", "--agent", PLAIN, "--agent-version", "v1", "--model", "sim:oracle", "--db", str(db),
               "--dimension", "D4")  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    run_id = out_value(done, "run_id")
    assert out_value(done, "subject") == f"agent:{PLAIN}"
    model, hashes, config = rows(db, "SELECT model, input_hashes, config FROM runs")[0]
    assert model == f"agent:{PLAIN}"
    assert json.loads(hashes)["agent_version"] == "v1"
    assert json.loads(config)["agent_model"] == "sim:oracle"
    # every case judged by every rung, rung 5 included, and passed (sim:oracle plays the golden path)
    verdicts = rows(db, "SELECT verdict, count(*) FROM case_results WHERE run_id = ? GROUP BY 1", [run_id])
    assert verdicts == [("PASS", 18)]
    judged = rows(db, "SELECT count(DISTINCT trace_id) FROM rung_results WHERE rung = 5 AND status = 'pass'")
    assert judged == [(18,)]
    # each call_tool an execute_tool span in its case's trace, under the case's root span
    spans = rows(
        db,
        "SELECT count(*) FROM spans s JOIN case_runs c ON c.trace_id = s.trace_id "
        "WHERE s.name LIKE 'execute_tool %' AND s.parent_span_id = (SELECT span_id FROM spans r "
        "WHERE r.trace_id = s.trace_id AND r.name LIKE 'invoke_agent %')",
    )
    assert spans[0][0] >= 36  # every D4 case requests and confirms
    report = cli("report", run_id, "--db", str(db), "--format", "json")
    assert json.loads(report.stdout)["run"]["model"] == f"agent:{PLAIN}"


def test_an_async_agent_with_its_own_instrumentation(tmp_path: Path) -> None:
    db = tmp_path / "a.duckdb"
    done = cli("run", "--agent", "traced_async:run", "--model", "sim:oracle", "--db", str(db),
               "--case", "fc-d4-001", "--case", "fc-d2-001", "--repeat", "2", cwd=AGENTS)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert rows(db, "SELECT verdict, count(*) FROM case_results GROUP BY 1") == [("PASS", 4)]
    # the agent's own spans are in its case's trace, and the tool spans are their children
    steps = rows(
        db,
        "SELECT count(*), count(DISTINCT s.trace_id) FROM spans s JOIN case_runs c USING (trace_id) "
        "WHERE s.name LIKE 'my_agent.step %'",
    )
    assert steps[0][1] == 4 and steps[0][0] >= 4
    orphans = rows(
        db,
        "SELECT count(*) FROM spans t WHERE t.name LIKE 'execute_tool %' AND NOT EXISTS (SELECT 1 "
        "FROM spans p WHERE p.span_id = t.parent_span_id AND p.name LIKE 'my_agent.step %')",
    )
    assert orphans == [(0,)]
    assert rows(db, "SELECT count(*) FROM traces") == [(4,)]  # nothing stray, no judge traces aside
