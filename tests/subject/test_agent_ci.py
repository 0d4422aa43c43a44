"""The composite action with `agent:`: the team's agent runs, is gated against its baseline, and
the pull request's comment (before/after table, flipped cases) is written to a file and to the
job summary — the action's steps executed as written (tests/workflows/test_ci_action.py)."""

from __future__ import annotations

from pathlib import Path

from conftest import ROOT, cli, cli_in_process, out_value

from tests.workflows.test_ci_action import run_action

CASES = ("--case", "fc-d4-001", "--case", "fc-d4-002", "--case", "fc-d1-001")
AGENT = "examples.agents.plain_openai:run"


def test_the_action_runs_and_gates_an_agent_and_writes_the_comment(tmp_path: Path) -> None:
    db = tmp_path / "lock.duckdb"
    runs = []
    for _ in range(3):
        done = cli("run", "--agent", AGENT, "--agent-version", "v1", "--model", "sim:oracle", *CASES,
                   "--no-judge", "--db", str(db), cwd=ROOT)  # fmt: skip
        assert done.returncode == 0, done.stderr
        runs.append(out_value(done, "run_id"))
    ev = tmp_path / "eval"
    for args in (
        ("consistency", *runs, "--output", str(ev / "consistency.json")),
        ("baseline", "review-template", runs[0], "--output", str(ev / "review.json")),
        ("baseline", "lock", "--canonical", runs[0], "--consistency", str(ev / "consistency.json"),
         "--review", str(ev / "review.json"), "--output", str(ev / "baseline.json")),
    ):  # fmt: skip
        step = cli_in_process(*args, "--db", str(db))  # set-up: the action is the subject
        assert step.returncode == 0, step.stderr
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "examples").symlink_to(ROOT / "examples")
    inputs = {"model": "sim:oracle", "agent": AGENT, "agent-version": "v2", "baseline": str(ev / "baseline.json"),
              "install": "", "run-args": " ".join([*CASES, "--no-judge"])}  # fmt: skip
    result = run_action(workspace, inputs)
    assert not result["failed"], result["ran"]
    assert result["outputs"]["gate"] == "passed"
    comment = workspace / result["outputs"]["comment-path"]
    body = comment.read_text()
    assert body in result["summary"]
    assert f"### traceladder — `agent:{AGENT}`" in body and "(version `v1`) → run" in body
    assert "(version `v2`)" in body and "**Flipped cases**: 0 regressed, 0 improved." in body
