"""The run's MCP tool server through the real CLI: with the `mcp` extra, each case of a `run
--agent-cmd` (and `--agent`) run gets its own streamable-HTTP MCP URL; an agent using the real
`mcp` client there has every call executed in its case's sandbox, an `execute_tool` span in its
case's trace in the real DuckDB store. A URL that is not the case run's own is refused (404),
never attributed to a case by guessing. Without the extra: no URL, no error."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from conftest import ROOT, cli, out_value, rows

PROBE = ROOT / "tests" / "subject" / "agents" / "mcp_probe.py"
CASES = ("--case", "fc-d2-001", "--case", "fc-d4-001")
TOOL_SPANS = (
    "SELECT c.case_id, s.name, s.attributes->>'$.\"gen_ai.tool.call.arguments\"' FROM spans s "
    "JOIN case_runs c ON c.trace_id = s.trace_id AND c.run_id = ? WHERE s.name LIKE 'execute_tool %' "
    "ORDER BY c.case_id, s.start_ns"
)


def test_an_agent_mounting_its_mcp_url_passes_with_each_call_in_its_cases_trace(tmp_path: Path) -> None:
    db = tmp_path / "run.duckdb"
    agent = f"{sys.executable} {ROOT / 'examples' / 'agents' / 'mcp_http_agent.py'}"
    done = cli("run", "--agent-cmd", agent, "--model", "sim:oracle", "--db", str(db), *CASES, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    run_id = out_value(done, "run_id")
    assert rows(
        db, "SELECT case_id, verdict FROM case_results WHERE run_id = ? ORDER BY case_id", [run_id]
    ) == [
        ("fc-d2-001", "PASS"),
        ("fc-d4-001", "PASS"),
    ]
    placed = [(case, name) for case, name, _ in rows(db, TOOL_SPANS, [run_id])]
    assert placed == [
        ("fc-d2-001", "execute_tool request_address_update"),
        ("fc-d4-001", "execute_tool request_cancel"),
        ("fc-d4-001", "execute_tool confirm_action"),
    ]
    # each under its case's root span, and the confirmation in the run's sandbox (the state rung)
    assert rows(
        db,
        "SELECT bool_and(p.name LIKE 'invoke_agent %') FROM spans s JOIN spans p "
        "ON p.span_id = s.parent_span_id AND p.trace_id = s.trace_id WHERE s.name LIKE 'execute_tool %'",
    ) == [(True,)]
    assert rows(
        db,
        "SELECT status FROM rung_results r JOIN case_runs c ON c.trace_id = r.trace_id "
        "WHERE c.case_id = 'fc-d4-001' AND r.rung_name = 'state'",
    ) == [("pass",)]


def _probed(db: Path, run_id: str) -> dict[str, dict]:
    answers = rows(
        db, "SELECT case_id, final_text FROM case_runs WHERE run_id = ? ORDER BY case_id", [run_id]
    )
    return {case: json.loads(text) for case, text in answers}


def _own_calls_only(db: Path, run_id: str) -> None:
    assert rows(db, TOOL_SPANS, [run_id]) == [
        ("fc-d2-001", "execute_tool get_order", '{"order_id": "OWN-fc-d2-001"}'),
        ("fc-d4-001", "execute_tool get_order", '{"order_id": "OWN-fc-d4-001"}'),
    ]
    # the calls through URLs not the case run's own executed nowhere, in no trace
    assert rows(db, "SELECT count(*) FROM spans WHERE attributes::VARCHAR LIKE '%PROBE-%'") == [(0,)]


def test_another_cases_url_is_refused_never_attributed_by_guessing(tmp_path: Path) -> None:
    db = tmp_path / "run.duckdb"
    agent = f"{sys.executable} {PROBE}"
    done = cli("run", "--agent-cmd", agent, "--model", "sim:oracle", "--db", str(db), *CASES, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    run_id = out_value(done, "run_id")
    for outcome in _probed(db, run_id).values():
        assert outcome["own"] == "executed"
        assert outcome["other_case"].startswith("refused") and outcome["made_up"].startswith("refused")
    _own_calls_only(db, run_id)


def test_a_python_agent_gets_its_mcp_url_on_the_case(tmp_path: Path) -> None:
    db = tmp_path / "run.duckdb"
    done = cli("run", "--agent", f"{PROBE}:run", "--model", "sim:oracle", "--db", str(db), *CASES, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    run_id = out_value(done, "run_id")
    assert {case: o["own"] for case, o in _probed(db, run_id).items()} == {
        "fc-d2-001": "executed",
        "fc-d4-001": "executed",
    }
    _own_calls_only(db, run_id)


def test_without_the_mcp_extra_no_url_and_no_error(tmp_path: Path) -> None:
    (tmp_path / "mcp").mkdir()
    (tmp_path / "mcp" / "__init__.py").write_text("raise ImportError('not installed here')\n")
    db = tmp_path / "run.duckdb"
    done = cli(
        "run", "--agent-cmd", f"{sys.executable} {PROBE}", "--model", "sim:oracle", "--db", str(db), *CASES,
        env={"PYTHONPATH": str(tmp_path), "TRACELADDER_MCP_URL": "http://127.0.0.1:9/stale"}, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "mcp" not in done.stderr.lower(), done.stderr
    # no variable (an inherited one is dropped, never passed on), and the case JSON says null
    assert _probed(db, out_value(done, "run_id")) == {
        "fc-d2-001": {"mcp_url": None},
        "fc-d4-001": {"mcp_url": None},
    }
