"""The pydantic-ai and LangGraph examples as `--agent` targets, on the shipped suite, through the
real CLI against the simulated model served on 127.0.0.1.

The frameworks are not dependencies of traceladder: the test installs them with pip into a
throwaway directory on PYTHONPATH for the `traceladder` process (pinned to this environment's
versions of every package both share, so nothing traceladder uses changes). Marked `frameworks`:
`make test` leaves it out; CI runs it as its own step (`make test-frameworks`, decision 265)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, cli, out_value, rows

pytestmark = pytest.mark.frameworks

PACKAGES = ("pydantic-ai-slim[openai]", "langgraph", "langchain-openai")


@pytest.fixture(scope="module")
def frameworks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("frameworks")
    pins = folder / "constraints.txt"
    frozen = subprocess.run([sys.executable, "-m", "pip", "freeze", "--exclude-editable"], capture_output=True,
                            text=True, check=True).stdout  # fmt: skip
    pins.write_text(frozen)
    target = folder / "site"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--target", str(target),
         "-c", str(pins), *PACKAGES],
        capture_output=True, text=True, timeout=1200,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return target


@pytest.mark.parametrize("example", ["pydantic_ai_agent", "langgraph_agent"])
def test_a_framework_agent_runs_the_suite(tmp_path: Path, frameworks: Path, example: str) -> None:
    db = tmp_path / "f.duckdb"
    agent = f"{ROOT / 'examples' / 'agents' / example}.py:run"
    done = cli("run", "--agent", agent, "--model", "sim:oracle", "--dimension", "D4", "--dimension", "D2",
               "--db", str(db), env={"PYTHONPATH": str(frameworks)})  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    run_id = out_value(done, "run_id")
    assert rows(db, "SELECT DISTINCT verdict FROM case_results WHERE run_id = ?", [run_id]) == [("PASS",)]
    assert rows(db, "SELECT count(*) FROM case_results") == [(36,)]
    tools = rows(db, "SELECT count(*) FROM spans WHERE name LIKE 'execute_tool %' AND source = 'agent'")
    assert tools[0][0] >= 36
