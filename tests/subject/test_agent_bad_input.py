"""Bad agents and bad input to `run --agent` / `--agent-cmd`: each is one clear line (exit 2,
nothing recorded) or a recorded AGENT_ERROR with its reason — never a traceback, never a hang,
and nothing else in the run lost."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
from conftest import cli, out_value, rows

AGENTS = Path(__file__).parent / "agents"
TWO = ("--case", "fc-d4-001", "--case", "fc-d4-002")  # the agents misbehave on the second


def _run(tmp_path: Path, *args: str, timeout: float = 300):
    db = tmp_path / "a.duckdb"
    return db, cli("run", "--model", "sim:oracle", "--db", str(db), *args, cwd=AGENTS, timeout=timeout)


def _refused(done, db: Path, words: str) -> None:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], lines
    assert not db.exists() or rows(db, "SELECT count(*) FROM runs") == [(0,)]


@pytest.mark.parametrize(
    ("target", "words"),
    [
        ("no_such_module:run", "module no_such_module does not import: ModuleNotFoundError"),
        ("misbehaving:missing", "module misbehaving has no attribute missing"),
        ("misbehaving:NOT_CALLABLE", "NOT_CALLABLE is a int, not a function"),
        ("misbehaving:two_arguments", "two_arguments(case, extra) must take exactly one argument"),
        ("misbehaving", "is not MODULE:FUNCTION"),
        ("nowhere/agent.py:run", "no file nowhere/agent.py"),
    ],
)
def test_an_agent_that_cannot_be_called_is_one_line(tmp_path: Path, target: str, words: str) -> None:
    db, done = _run(tmp_path, "--agent", target, *TWO)
    _refused(done, db, words)


def test_an_agent_module_that_fails_on_import_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("import json\nraise RuntimeError('no config file')\n")
    db = tmp_path / "a.duckdb"
    done = cli("run", "--agent", "broken:run", "--db", str(db), cwd=tmp_path)
    _refused(done, db, "module broken does not import: RuntimeError: no config file")


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        (("--agent", "misbehaving:raises", "--agent-cmd", "true"), "give one of --agent"),
        (("--agent-cmd", "no-such-program-xyz --flag"), "no program 'no-such-program-xyz'"),
        (("--agent-cmd", "'unclosed"), "is not a command line"),
        (("--agent", "misbehaving:raises", "--max-steps", "3"), "--max-steps sets the built-in loop"),
        (("--agent", "misbehaving:raises", "--model", "sim:nonsense"), "unknown simulated model"),
    ],
)
def test_bad_agent_flags_are_one_line(tmp_path: Path, flags: tuple[str, ...], words: str) -> None:
    db = tmp_path / "a.duckdb"
    done = cli("run", "--db", str(db), *flags, *TWO, cwd=AGENTS)
    _refused(done, db, words)


def _case_runs(db: Path) -> dict[str, tuple]:
    return {
        r[0]: r[1:]
        for r in rows(db, "SELECT case_id, agent_status, error_type, error_message FROM case_runs")
    }


def _verdicts(db: Path) -> dict[str, str]:
    return dict(rows(db, "SELECT case_id, verdict FROM case_results"))


def test_an_agent_that_raises_is_agent_error_and_the_rest_is_judged(tmp_path: Path) -> None:
    db, done = _run(tmp_path, "--agent", "misbehaving:raises", *TWO)
    assert done.returncode == 0, done.stderr
    runs = _case_runs(db)
    assert runs["fc-d4-002"] == ("error", "agent_exception", "ValueError: the agent's own bug")
    assert runs["fc-d4-001"][0] == "ok"
    assert _verdicts(db) == {"fc-d4-001": "PASS", "fc-d4-002": "AGENT_ERROR"}
    assert "AGENT_ERROR agent_exception" in done.stderr


def test_an_agent_that_hangs_times_out_as_agent_error(tmp_path: Path) -> None:
    db, done = _run(tmp_path, "--agent", "misbehaving:hangs_on_one", "--timeout", "2", *TWO, timeout=120)
    assert done.returncode == 0, done.stderr
    runs = _case_runs(db)
    assert runs["fc-d4-002"][:2] == ("error", "timeout")
    assert _verdicts(db) == {"fc-d4-001": "PASS", "fc-d4-002": "AGENT_ERROR"}


def test_bad_tool_calls_are_tool_errors_the_agent_reads(tmp_path: Path) -> None:
    db, done = _run(tmp_path, "--agent", "misbehaving:bad_tool_calls", "--case", "fc-d2-001")
    assert done.returncode == 0, done.stderr
    errors = rows(
        db, "SELECT tool_name, error_type, status_code FROM spans WHERE name LIKE 'execute_tool %' "
        "AND status_code = 'ERROR' ORDER BY start_ns",
    )  # fmt: skip
    assert errors == [("no_such_tool", "unknown_tool", "ERROR"), ("get_order", "invalid_json", "ERROR")]
    # judged as what the agent did: the extra calls are findings, not a crash
    assert rows(db, "SELECT agent_status FROM case_runs") == [("ok",)]
    assert rows(db, "SELECT verdict FROM case_results") == [("FAIL",)]


def test_spans_of_another_trace_are_not_kept_and_said(tmp_path: Path) -> None:
    db, done = _run(tmp_path, "--agent", "misbehaving:stray_spans", *TWO)
    assert done.returncode == 0, done.stderr
    assert "2 span(s) the agent sent named no case of this run and were not kept" in done.stderr
    assert rows(db, "SELECT count(*) FROM spans WHERE name = 'stray root'") == [(0,)]
    assert _verdicts(db) == {"fc-d4-001": "PASS", "fc-d4-002": "PASS"}


def test_a_tool_called_from_another_thread_is_still_the_cases(tmp_path: Path) -> None:
    db, done = _run(tmp_path, "--agent", "misbehaving:tool_from_thread", *TWO)
    assert done.returncode == 0, done.stderr
    assert _verdicts(db) == {"fc-d4-001": "PASS", "fc-d4-002": "PASS"}


CMD = f"{sys.executable} {AGENTS / 'bad_command.py'}"


def test_a_command_that_exits_non_zero_is_agent_error_with_its_stderr(tmp_path: Path) -> None:
    db, done = _run(tmp_path, "--agent-cmd", f"{CMD} exit", "--case", "fc-d4-001")
    assert done.returncode == 0, done.stderr
    status, error_type, message = _case_runs(db)["fc-d4-001"]
    assert (status, error_type) == ("error", "agent_exit")
    assert message == "the agent command exited with 3: RuntimeError: the tool server is down"
    tail = rows(
        db, "SELECT attributes->>'$.\"traceladder.agent.stderr_tail\"' FROM spans WHERE name LIKE 'invoke%'"
    )
    assert "Traceback" in tail[0][0]


def test_a_command_that_hangs_is_killed_at_the_timeout(tmp_path: Path) -> None:
    started = time.monotonic()
    db, done = _run(
        tmp_path, "--agent-cmd", f"{CMD} hang", "--case", "fc-d4-001", "--timeout", "2", "--no-report"
    )
    assert done.returncode == 0, done.stderr
    assert _case_runs(db)["fc-d4-001"][:2] == ("error", "timeout")
    assert time.monotonic() - started < 60  # killed, not waited for (a bound, not a timing claim)


def test_a_command_that_prints_megabytes_keeps_a_bounded_answer(tmp_path: Path) -> None:
    db, done = _run(tmp_path, "--agent-cmd", f"{CMD} megabytes", "--case", "fc-d1-001")
    assert done.returncode == 0, done.stderr
    (answer,) = rows(db, "SELECT final_text FROM case_runs")[0]
    assert answer.endswith("the answer") and len(answer) <= 64 * 1024
    assert rows(db, "SELECT agent_status FROM case_runs") == [("ok",)]


def test_children_a_command_leaves_behind_are_killed(tmp_path: Path) -> None:
    marker = tmp_path / "child-alive"
    db, done = _run(tmp_path, "--agent-cmd", f"{CMD} orphan {marker}", "--case", "fc-d1-001", "--no-report")
    assert done.returncode == 0, done.stderr
    # Wait until the child is gone (killed, or exited after writing its marker had it survived),
    # instead of sleeping past its 2 s: a killed child ends the wait at once.
    pid = int((tmp_path / "child-alive.pid").read_text())
    deadline = time.monotonic() + 60  # a bound, not a timing claim
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)
    assert not marker.exists()


def _alive(pid: int) -> bool:
    """Whether the process runs (a zombie has stopped: it can write nothing more)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_otlp_garbage_to_the_receiver_is_refused_and_said(tmp_path: Path) -> None:
    db, done = _run(tmp_path, "--agent-cmd", f"{CMD} garbage", "--case", "fc-d1-001")
    assert done.returncode == 0, done.stderr
    assert rows(db, "SELECT final_text FROM case_runs") == [("receiver said 400",)]
    assert "1 request(s) to the run's OTLP receiver were not OTLP; refused" in done.stderr


def test_bad_tool_calls_over_http_are_tool_errors(tmp_path: Path) -> None:
    db, done = _run(tmp_path, "--agent-cmd", f"{CMD} tools", "--case", "fc-d1-001")
    assert done.returncode == 0, done.stderr
    assert rows(db, "SELECT final_text FROM case_runs") == [("unknown_tool invalid_json",)]
    assert rows(
        db, "SELECT count(*) FROM spans WHERE name LIKE 'execute_tool %' AND status_code = 'ERROR'"
    ) == [(2,)]


def test_a_command_with_no_spans_is_judged_on_what_it_did(tmp_path: Path) -> None:
    db, done = _run(tmp_path, "--agent-cmd", f"{CMD} silent", *TWO)
    assert done.returncode == 0, done.stderr
    # no tool call at all: each case fails for the calls it never made, none is an error
    assert rows(db, "SELECT DISTINCT failure_class FROM case_results") == [("CALL_MISSING",)]
    run_id = out_value(done, "run_id")
    assert json.loads(cli("report", run_id, "--db", str(db), "--format", "json").stdout)["summary"]
