"""docs/your-own-agent.md runs as written: its bash blocks in order, in one shell, in a fresh
directory beside a checkout's tests/ and examples/ — from production traces to a locked baseline
and a passing gate."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import ROOT, rows
from forked_pages import run_page

DOC = ROOT / "docs" / "your-own-agent.md"


def test_the_page_runs_as_written(tmp_path: Path) -> None:
    for name in ("tests", "examples"):
        (tmp_path / name).symlink_to(ROOT / name)
    done = run_page(DOC, tmp_path, ("", ""), timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "recorded 2 cases (D3 2), 3 tools, 6 recorded results; skipped 2 traces" in done.stdout
    skipped = [line for line in done.stderr.splitlines() if line.startswith("skipped trace")]
    assert skipped == [
        line
        for line in DOC.read_text().splitlines()
        if line.strip().startswith("skipped trace")
        for line in [line.strip()]
    ]  # fmt: skip  (the page shows what the command says)
    # the gate judged the pull request's new run (its own prompt), not one the baseline was locked from
    (pr_run,) = rows(tmp_path / "pr.duckdb", "SELECT run_id FROM runs")
    locked = {r for (r,) in rows(tmp_path / "lock.duckdb", "SELECT run_id FROM runs")}
    assert f"gate passed for {pr_run[0]}:" in done.stdout + done.stderr and pr_run[0] not in locked
    baseline = json.loads((tmp_path / "eval" / "baseline.json").read_text())
    assert rows(tmp_path / "pr.duckdb", "SELECT input_hashes->>'system_prompt' FROM runs") != [
        (baseline["input_hashes"]["system_prompt"],)
    ]  # the changed prompt is what was gated
    cases = [json.loads(x) for x in (tmp_path / "my-agent" / "cases.jsonl").read_text().splitlines()]
    assert {c["dimension"] for c in cases} == {"D3"}
    assert rows(tmp_path / "ci.duckdb", "SELECT DISTINCT verdict FROM case_results") == [("PASS",)]
    # the MCP section: through the run's own server ($TRACELADDER_MCP_URL), each call in its case
    assert rows(
        tmp_path / "mcp-http.duckdb",
        "SELECT c.case_id, s.name FROM spans s JOIN case_runs c USING (trace_id) "
        "WHERE s.name LIKE 'execute_tool %' ORDER BY c.case_id, s.start_ns",
    ) == [
        ("fc-d2-001", "execute_tool request_address_update"),
        ("fc-d4-001", "execute_tool request_cancel"),
        ("fc-d4-001", "execute_tool confirm_action"),
    ]
    assert rows(tmp_path / "mcp-http.duckdb", "SELECT DISTINCT verdict FROM case_results") == [("PASS",)]
    # and through `tools serve` over stdio, launched by the agent
    assert rows(
        tmp_path / "mcp.duckdb",
        "SELECT c.case_id, s.name FROM spans s JOIN case_runs c USING (trace_id) "
        "WHERE s.name LIKE 'execute_tool %' ORDER BY s.start_ns",
    ) == [("fc-d4-001", "execute_tool request_cancel"), ("fc-d4-001", "execute_tool confirm_action")]
    assert rows(tmp_path / "flights.duckdb", "SELECT count(*) FROM case_results WHERE verdict = 'PASS'") == [
        (12,)
    ]
