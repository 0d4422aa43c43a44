"""Who played the user is part of a run (`runs.config.user_model`): a `--resume` plays the rest of
the run with the same user model without being told again, and refuses another one — a run whose
goal cases were played by two different users would mix two tests under one run id. A run
without a user model records none, so its configuration and `run_config` hash are what they were
before the user model was kept. And a stopped attempt's traces never join the conversation the
resume plays, for a single-turn case as for a multi-turn one.

Everything runs for real: the CLI, the simulated model and user, a real store; the interrupted run
is a real process killed mid-run."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

from agent.test_runner import start_slow_run
from conftest import ROOT, cli, out_value, rows

from conversation.goal_cases import GOAL_ID, domain_with_goal

SINGLE_TURN = ("fl-d1-001", "fl-d1-002", "fl-d2-001", "fl-d2-002")


def _config(db: Path) -> dict:
    ((config,),) = rows(db, "SELECT config FROM runs")
    return json.loads(config)


STOPPED = "SELECT count(DISTINCT trace_id) FROM spans WHERE trace_id NOT IN (SELECT trace_id FROM case_runs)"


def _killed_after_the_first_case(domain: Path, folder: Path) -> tuple[Path, str]:
    """A run of four single-turn cases and the goal case (last), SIGKILLed once the first case is
    done, so that cases in flight leave traces no case run owns (stopped attempts). Whether a
    stopped case had written a span yet is timing; a kill that left none proves nothing here,
    so the run is made again (at most three times)."""
    selection = [a for case in (*SINGLE_TURN, GOAL_ID) for a in ("--case", case)]
    for attempt in range(3):
        db = folder / f"goal-{attempt}.duckdb"
        proc = start_slow_run(
            db, "[1/5]", "--domain", str(domain), "--user-model", "sim:user", *selection,
            "--sim-delay", "0.2", "--concurrency", "4",  # the later flags win: slower, more in flight
        )  # fmt: skip
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate()
        if rows(db, STOPPED)[0][0] > 0:
            break
    ((run_id,),) = rows(db, "SELECT run_id FROM runs")
    return db, str(run_id)


def test_a_resume_plays_the_goal_case_with_the_recorded_user_model_and_refuses_another(
    tmp_path: Path,
) -> None:
    domain = domain_with_goal(tmp_path)
    db, run_id = _killed_after_the_first_case(domain, tmp_path)
    assert _config(db)["user_model"] == "sim:user"
    played = rows(db, "SELECT count(*) FROM case_runs WHERE case_id = ?", [GOAL_ID])
    assert played == [(0,)]  # the goal case did not finish: the resume must play it
    assert rows(db, STOPPED)[0][0] > 0  # cases killed in flight left traces no case run owns

    other = cli("run", "--resume", run_id, "--user-model", "gpt-4o-mini", "--db", str(db), "--no-report")
    assert other.returncode == 2, other.stderr
    assert other.stderr.strip().splitlines() == [
        f"traceladder: run {run_id} used --user-model sim:user; drop --user-model or pass that one"
    ]
    resumed = cli("run", "--resume", run_id, "--db", str(db))  # no --user-model; evaluated
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert rows(db, "SELECT status FROM runs") == [("complete",)]
    # the goal case's conversation alone: a stopped attempt of a single-turn case did not join
    # the trace its resume played into a two-trace "conversation" judged NOT_EVALUATED
    assert rows(db, "SELECT verdict FROM conversation_results") == [("PASS",)]
    same = cli("run", "--resume", run_id, "--user-model", "sim:user", "--db", str(db), "--no-report")
    assert same.returncode == 2 and "already complete" in same.stderr  # the same one is not refused


def test_an_agent_runs_record_and_keep_its_user_model_and_a_run_without_records_none(tmp_path: Path) -> None:
    domain = domain_with_goal(tmp_path)
    agent = str(ROOT / "examples" / "agents" / "plain_openai.py") + ":run"
    db = tmp_path / "agent.duckdb"
    done = cli("run", "--domain", str(domain), "--agent", agent, "--model", "sim:oracle", "--user-model",
               "sim:user", "--case", GOAL_ID, "--db", str(db), "--no-report")  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    run_id = out_value(done, "run_id")
    assert _config(db)["user_model"] == "sim:user"
    other = cli("run", "--resume", run_id, "--user-model", "gpt-4o-mini", "--db", str(db), "--no-report")
    assert other.returncode == 2
    assert f"run {run_id} used --user-model sim:user; drop --user-model or pass that one" in other.stderr
    # a run that needs no user model records none: its configuration is the one hashed before
    plain = tmp_path / "plain.duckdb"
    single = cli("run", "--domain", str(domain), "--model", "sim:oracle", "--case", "fl-d1-001", "--db", str(plain),
                 "--no-report")  # fmt: skip
    assert single.returncode == 0, single.stderr[-2000:]
    assert "user_model" not in _config(plain)
