"""`run` plays a multi-turn case: its turns in order, the history carried, each turn its own
trace judged against its own golden calls, the turns one conversation judged as a whole — in the
built-in loop (the real `openai` client against the simulated model) and for an agent under test
(`--agent`, `--agent-cmd`), through the real CLI into a real DuckDB file."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from conftest import ROOT, cli, out_value, rows

from conversation.turn_cases import CASE_ID, TURN_CALLS, domain_with_turns
from traceladder.store.db import Store
from traceladder.store.runs import verdicts

AGENTS = ROOT / "tests" / "subject" / "agents"
PLAIN = str(ROOT / "examples" / "agents" / "plain_openai.py") + ":run"

TURNS_SQL = """
SELECT ct.turn, ct.agent_status, r.verdict, c.conversation_id, c.turn,
       list(t.tool_name ORDER BY t.ordinal), list(t.arguments_raw ORDER BY t.ordinal),
       list(t.call_id ORDER BY t.ordinal)
FROM case_turns ct
LEFT JOIN trace_results r USING (trace_id)
LEFT JOIN conversations c USING (trace_id)
LEFT JOIN tool_calls t USING (trace_id)
WHERE ct.run_id = ? GROUP BY ALL ORDER BY ct.turn
"""


def _played(db: Path, run_id: str) -> list[tuple]:
    return rows(db, TURNS_SQL, [run_id])


def _golden(turn: int) -> list[tuple[str, dict]]:
    return [(c["tool"], c["params"]) for c in TURN_CALLS[turn]]


def _check_every_turn_passes(db: Path, run_id: str, *, ids_given: bool = True) -> None:
    played = _played(db, run_id)
    assert [p[0] for p in played] == [0, 1, 2]
    conversation = played[0][3]
    assert conversation.startswith(f"{run_id}/{CASE_ID}/0/")  # RUN/CASE/REPEAT/ATTEMPT
    for turn, status, verdict, conv, conv_turn, tools, arguments, _ in played:
        assert (status, verdict, conv, conv_turn) == ("ok", "PASS", conversation, turn)
        # each turn's trace holds exactly the calls made in it: never an earlier turn's again
        assert sorted(zip(tools, [json.loads(a) for a in arguments], strict=True), key=str) == sorted(
            _golden(turn), key=str
        )
    ids = [i for p in played for i in p[7]]
    if ids_given:  # the model's ids (`sim:` prefixes each turn's): unique across the conversation
        assert len(ids) == 4 and len(set(ids)) == 4, ids
    else:  # an agent executing calls without the model's id gets none invented (decision 811)
        assert ids == [None] * 4, ids
    assert rows(
        db, "SELECT verdict, turns FROM conversation_results WHERE conversation_id = ?", [conversation]
    ) == [("PASS", 3)]
    # the case is one case run, its trace the turn that ended the conversation
    assert rows(db, "SELECT count(*), any_value(agent_status) FROM case_runs WHERE run_id = ?", [run_id]) == [
        (1, "ok")
    ]


def test_the_built_in_loop_plays_every_turn_with_the_history_and_each_turn_passes(tmp_path: Path) -> None:
    domain = domain_with_turns(tmp_path)
    db = tmp_path / "run.duckdb"
    done = cli("run", "--domain", str(domain), "--model", "sim:oracle", "--case", CASE_ID, "--db", str(db))
    assert done.returncode == 0, done.stderr[-2000:]
    assert (
        f"{CASE_ID} 3 turns PASS by the code rungs; the conversation is judged after the run" in done.stderr
    )
    run_id = out_value(done, "run_id")
    _check_every_turn_passes(db, run_id)
    # each turn's first request carries the whole dialogue so far: turn 3 opens with the three user
    # messages and both earlier answers, and is offered its turn's tools (turn 2: book_flight only)
    first = rows(
        db,
        "SELECT ct.turn, s.attributes->>'$.\"gen_ai.input.messages\"', "
        "s.attributes->>'$.\"gen_ai.tool.definitions\"' FROM case_turns ct JOIN spans s USING (trace_id) "
        "WHERE s.name LIKE 'chat %' QUALIFY row_number() OVER (PARTITION BY ct.turn ORDER BY s.start_ns) = 1 "
        "ORDER BY ct.turn",
    )
    roles = [[m["role"] for m in json.loads(messages)] for _, messages, _ in first]
    assert roles[0] == ["system", "user"]
    assert roles[2][:2] == ["system", "user"] and roles[2].count("user") == 3 and roles[2][-1] == "user"
    offered = [sorted(d["name"] for d in json.loads(defs)) for _, _, defs in first]
    assert offered[1] == ["book_flight"] and "search_flights" in offered[0]
    assert rows(
        db, "SELECT count(*) FROM trace_results WHERE run_id = ? AND verdict = 'NOT_EVALUATED'", [run_id]
    ) == [(0,)]
    # docs/conversations.md's query over the played turns runs as written and says the same
    doc = (ROOT / "docs" / "conversations.md").read_text(encoding="utf-8")
    (sql,) = [b for b in re.findall(r"```sql\n(.*?)```", doc, re.S) if "case_turns" in b]
    shown = cli("sql", "--db", str(db), sql, "--json")
    assert shown.returncode == 0, shown.stderr
    assert [(r["turn"], r["agent_status"], r["verdict"]) for r in json.loads(shown.stdout)] == [
        (0, "ok", "PASS"), (1, "ok", "PASS"), (2, "ok", "PASS")
    ]  # fmt: skip


def test_a_python_agent_is_called_once_per_turn_with_the_conversation_so_far(tmp_path: Path) -> None:
    domain = domain_with_turns(tmp_path)
    db = tmp_path / "agent.duckdb"
    done = cli(
        "run", "--agent", PLAIN, "--domain", str(domain), "--model", "sim:oracle", "--case", CASE_ID, "--db", str(db)
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    _check_every_turn_passes(db, out_value(done, "run_id"))


def test_a_command_agent_gets_each_turn_with_its_history(tmp_path: Path) -> None:
    domain = domain_with_turns(tmp_path)
    db = tmp_path / "cmd.duckdb"
    log = tmp_path / "turns.jsonl"
    command = f"{sys.executable} {AGENTS / 'turns_cmd.py'}"
    done = cli(
        "run", "--agent-cmd", command, "--domain", str(domain), "--model", "sim:oracle", "--case", CASE_ID,
        "--db", str(db), env={"TURNS_LOG": str(log)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    run_id = out_value(done, "run_id")
    _check_every_turn_passes(db, run_id, ids_given=False)  # it posts {"name", "arguments"} only
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert [c["turn"] for c in calls] == [0, 1, 2]
    assert [[m["role"] for m in c["messages"]] for c in calls] == [
        ["user"],
        ["user", "assistant", "user"],
        ["user", "assistant", "user", "assistant", "user"],
    ]
    stored = rows(db, "SELECT DISTINCT conversation_id FROM conversations c JOIN case_turns USING (trace_id)")
    assert {c["conversation_id"] for c in calls} == {stored[0][0]} and len(stored) == 1


def test_an_agent_that_raises_on_turn_two_keeps_turn_one_and_fails_the_conversation(tmp_path: Path) -> None:
    domain = domain_with_turns(tmp_path)
    db = tmp_path / "raises.duckdb"
    done = cli(
        "run", "--agent", f"{AGENTS / 'turn_two_raises.py'}:run", "--domain", str(domain), "--model", "sim:oracle",
        "--case", CASE_ID, "--db", str(db),
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    run_id = out_value(done, "run_id")
    played = _played(db, run_id)
    assert [(p[0], p[1], p[2]) for p in played] == [(0, "ok", "PASS"), (1, "error", "AGENT_ERROR")]
    assert played[0][5] == ["search_flights"]  # turn 1's call is kept
    error = rows(db, "SELECT error_type, error_message FROM case_turns WHERE turn = 1")
    assert error == [("agent_exception", "RuntimeError: the session store is down")]
    verdict = rows(db, "SELECT verdict, deciding_turn FROM conversation_results")
    assert verdict == [("AGENT_ERROR", 1)]
    assert rows(db, "SELECT agent_status, error_type FROM case_runs") == [("error", "agent_exception")]
    # a case run's verdict (repeatability, pass^k) is its conversation's, decided by turn 2
    with Store(db) as store:
        assert verdicts(store, run_id) == {(CASE_ID, 0): ("AGENT_ERROR", None)}
    # the report's per-case lines are the turns, each with its own verdict
    report = cli("report", run_id, "--db", str(db), "--format", "json")
    assert report.returncode == 0, report.stderr
    results = json.loads(report.stdout)["results"]
    assert [(r["case_id"], r["turn"], r["verdict"]) for r in results] == [
        (CASE_ID, 0, "PASS"), (CASE_ID, 1, "AGENT_ERROR")
    ]  # fmt: skip
    text = cli("report", run_id, "--db", str(db), "--format", "text")
    failing = [line for line in text.stdout.splitlines() if f"{CASE_ID} turn" in line]
    assert len(failing) == 1 and "turn 2" in failing[0] and "agent_exception" in text.stdout
    junit = cli("report", run_id, "--db", str(db), "--format", "junit")
    assert f'name="{CASE_ID} turn 1"' in junit.stdout and f'name="{CASE_ID} turn 2"' in junit.stdout


FROZEN_SUITE_SHA256 = "df52147eae5e1aa4ea157fb698c5f2418d2d8d23124e3e2e446bdd2916e19ec5"


def test_the_frozen_suite_and_its_single_turn_traces_are_as_before(tmp_path: Path) -> None:
    import hashlib

    suite = ROOT / "traceladder" / "suite" / "domain" / "retail" / "data" / "retail_fc.jsonl"
    assert hashlib.sha256(suite.read_bytes()).hexdigest() == FROZEN_SUITE_SHA256
    db = tmp_path / "frozen.duckdb"
    done = cli("run", "--model", "sim:oracle", "--dimension", "D4", "--db", str(db))
    assert done.returncode == 0, done.stderr[-2000:]
    assert rows(db, "SELECT verdict, count(*) FROM case_results GROUP BY 1") == [("PASS", 18)]
    # a single-turn case plays as before: no turns recorded, no turn on its trace, the same ids
    assert rows(db, "SELECT count(*) FROM case_turns") == [(0,)]
    tagged = "SELECT count(*) FROM spans WHERE attributes->>'$.\"traceladder.case.turn\"' IS NOT NULL"
    assert rows(db, tagged) == [(0,)]
    ids = {r[0] for r in rows(db, "SELECT DISTINCT call_id FROM tool_calls")}
    assert ids == {"call_0_0", "call_1_0"}


def test_a_stopped_conversation_resumes_as_a_new_attempt_judged_whole(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import time

    from conftest import as_foreground

    domain = domain_with_turns(tmp_path)
    db = tmp_path / "resume.duckdb"
    marker = tmp_path / "stalled"
    env = {**os.environ, "STALL_MARKER": str(marker)}
    env.pop("OPENAI_API_KEY", None)
    agent = f"{AGENTS / 'stalls_once_on_turn_two.py'}:run"
    proc = subprocess.Popen(
        [sys.executable, "-m", "traceladder", "run", "--agent", agent, "--domain", str(domain), "--model",
         "sim:oracle", "--case", CASE_ID, "--db", str(db), "--no-report"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=as_foreground, env=env,
    )  # fmt: skip
    deadline = time.monotonic() + 240
    while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert marker.exists(), proc.communicate()[1][-2000:]
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-2000:]
    ((run_id,),) = rows(db, "SELECT run_id FROM runs")
    assert rows(db, "SELECT count(*) FROM case_turns") == [(0,)]  # the stopped attempt is not recorded
    resumed = cli("run", "--resume", run_id, "--db", str(db), env={"STALL_MARKER": str(marker)})
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    _check_every_turn_passes(db, run_id)
    # the stopped attempt's turns (turn 1, and turn 2 cut short) stay in the store, in a
    # conversation of their own, never judged: they neither join nor spoil the one the resume played
    stopped = marker.read_text()
    assert stopped != _played(db, run_id)[0][3]
    assert rows(db, "SELECT count(*) FROM conversations WHERE conversation_id = ?", [stopped]) == [(2,)]
    assert rows(db, "SELECT count(*) FROM conversation_results WHERE conversation_id = ?", [stopped]) == [
        (0,)
    ]
