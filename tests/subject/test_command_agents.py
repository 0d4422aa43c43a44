"""`run --agent-cmd` through the real CLI with real agents in two languages: the Python example
(its OTel SDK exporting to the run's receiver) and a Node agent using the OpenTelemetry JS SDK,
installed from the npm registry into a throwaway directory. Each runs cases of the shipped suite
and of a declarative (recorded-results) suite; the spans their SDKs send in traces of their own are
attributed to the case by OTEL_RESOURCE_ATTRIBUTES and judged with the case."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, cli, out_value, rows

NODE_AGENT = ROOT / "examples" / "agents" / "node"


@pytest.fixture(scope="module")
def node_agent(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example Node agent with its OpenTelemetry packages installed (npm, no global state)."""
    assert shutil.which("node") and shutil.which("npm"), "Node and npm are part of the dev machine"
    folder = tmp_path_factory.mktemp("node-agent")
    for name in ("agent.mjs", "package.json"):
        shutil.copy(NODE_AGENT / name, folder / name)
    done = subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=folder, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return folder / "agent.mjs"


def _judged(db: Path, run_id: str, service: str) -> None:
    assert rows(db, "SELECT DISTINCT verdict FROM case_results WHERE run_id = ?", [run_id]) == [("PASS",)]
    # the SDK's own spans (its resource) sit in the traces of their cases, under the case's root
    placed = rows(
        db,
        "SELECT count(*), count(DISTINCT s.trace_id), bool_and(s.parent_span_id IS NOT NULL) FROM spans s "
        "JOIN case_runs c ON c.trace_id = s.trace_id AND c.run_id = ? "
        "WHERE s.resource->>'$.\"service.name\"' = ?",
        [run_id, service],
    )
    cases = rows(db, "SELECT count(*) FROM case_runs WHERE run_id = ?", [run_id])[0][0]
    assert placed[0][1] == cases and placed[0][0] >= cases and placed[0][2]
    assert rows(db, "SELECT count(*) FROM traces WHERE trace_id NOT IN (SELECT trace_id FROM case_runs)") == [
        (0,)
    ]


def _cases(domain: tuple[str, ...]) -> tuple[str, ...]:
    """Two cases of each suite: one that calls tools and one that does not (shipped: a
    request/confirm chain and a single call; recorded: a greeting and a search then a booking,
    each tool answered from the recorded results). Every case starts the agent's own process: the
    recorded suite's other ten cases repeat these shapes (one call, two calls, none)."""
    if domain:
        return ("--case", "fl-d1-001", "--case", "fl-d3-001")
    return ("--case", "fc-d4-001", "--case", "fc-d2-001")


@pytest.mark.parametrize("domain", [(), ("--domain", "examples/flights")], ids=["shipped", "recorded"])
def test_a_python_process_agent(tmp_path: Path, domain: tuple[str, ...]) -> None:
    db = tmp_path / "p.duckdb"
    agent = f"{sys.executable} {ROOT / 'examples' / 'agents' / 'command_agent.py'}"
    done = cli("run", "--agent-cmd", agent, "--model", "sim:oracle", "--db", str(db), *domain, *_cases(domain),
               cwd=ROOT)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    _judged(db, out_value(done, "run_id"), "python-command-agent")


@pytest.mark.parametrize("domain", [(), ("--domain", "examples/flights")], ids=["shipped", "recorded"])
def test_a_node_agent_with_the_opentelemetry_js_sdk(
    tmp_path: Path, node_agent: Path, domain: tuple[str, ...]
) -> None:
    db = tmp_path / "n.duckdb"
    done = cli("run", "--agent-cmd", f"node {node_agent}", "--model", "sim:oracle", "--db", str(db),
               *domain, *_cases(domain), cwd=ROOT)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    _judged(db, out_value(done, "run_id"), "node-agent")
