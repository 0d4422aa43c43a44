"""docs/agent-under-test.md runs as written: its bash blocks in order, in one shell, in a fresh
directory beside a checkout's examples/ and tests/ — the plain-openai example, a Node agent with
the OpenTelemetry JS SDK, a recorded suite, and a changed agent failing the gate."""

from __future__ import annotations

from pathlib import Path

from conftest import ROOT, rows
from forked_pages import run_page

DOC = ROOT / "docs" / "agent-under-test.md"


def test_the_page_runs_as_written(tmp_path: Path) -> None:
    for name in ("tests", "examples"):
        (tmp_path / name).symlink_to(ROOT / name)
    done = run_page(DOC, tmp_path, ("", ""), timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout + done.stderr
    assert rows(tmp_path / "first.duckdb", "SELECT DISTINCT verdict FROM case_results") == [("PASS",)]
    # the Node SDK's chat spans, in their cases' traces
    assert (
        rows(
            tmp_path / "node.duckdb",
            "SELECT count(*) FROM spans s JOIN case_runs c USING (trace_id) WHERE s.resource->>'$.\"service.name\"' = "
            "'node-agent'",
        )[0][0]
        >= 2
    )
    assert rows(tmp_path / "node.duckdb", "SELECT DISTINCT verdict FROM case_results") == [("PASS",)]
    assert rows(tmp_path / "recorded.duckdb", "SELECT DISTINCT verdict FROM case_results") == [("PASS",)]
    assert "gate exit 1" in out and "gate failed" in out
    assert "differs: agent_version (v1 → v2)" in out and "B is significantly worse than A" in out
    comment = (tmp_path / "comment.md").read_text()
    assert "| **pass rate** | 100.0% |" in comment and "| PASS | FAIL |" in comment
