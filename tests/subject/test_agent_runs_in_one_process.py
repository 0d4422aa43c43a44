"""Several runs of one Python agent in one process (`baseline init --agent`) each keep the spans
the agent's own instrumentation starts. OpenTelemetry allows one global tracer provider a
process, and a tracer taken from it at import time stays bound to what it first resolved: with a
provider set per run, runs 2 and 3 kept none of the agent's spans (54, 0, 0 step spans) and the
process warned "Overriding of current TracerProvider is not allowed"
(`produce/subject/run_provider.py`)."""

from __future__ import annotations

from pathlib import Path

from conftest import cli, rows

AGENTS = Path(__file__).parent / "agents"


def test_each_run_of_a_baseline_keeps_the_agents_own_spans(tmp_path: Path) -> None:
    db = tmp_path / "a.duckdb"
    done = cli("baseline", "init", "--agent", "traced_async:run", "--agent-version", "v1", "--model",
               "sim:oracle", "--case", "fc-d4-001", "--no-judge", "--db", str(db), "--dir", str(tmp_path / "eval"),
               cwd=AGENTS)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Overriding of current TracerProvider" not in done.stderr
    steps = rows(
        db,
        "SELECT c.run_id, count(s.span_id) FROM case_runs c LEFT JOIN spans s ON s.trace_id = c.trace_id "
        "AND s.name LIKE 'my_agent.step %' GROUP BY 1 ORDER BY min(c.finished_at)",
    )
    assert len(steps) == 3
    counts = [n for _, n in steps]
    assert counts[0] > 0 and counts == [counts[0]] * 3, steps  # the same agent, the same cases
    # and the agent's tool spans are children of its own steps, in every run
    orphans = rows(
        db,
        "SELECT count(*) FROM spans t WHERE t.name LIKE 'execute_tool %' AND NOT EXISTS (SELECT 1 "
        "FROM spans p WHERE p.span_id = t.parent_span_id AND p.name LIKE 'my_agent.step %')",
    )
    assert orphans == [(0,)]
