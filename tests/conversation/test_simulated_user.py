"""A goal case played by a simulated user: `sim:user` or an OpenAI-compatible user model
(`--user-model`) plays the user turn by turn, in the built-in loop and for an agent under test;
the user's requests are spans marked `traceladder.role = simulated_user`, never read as the
agent's; the conversation is judged against the goal. Everything runs for real: the CLI in its
own process, the `openai` client against the simulated model or a scripted server on 127.0.0.1,
a real DuckDB file."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, cli, out_value, rows
from scripted_server import ModelServer, Reply, chat_reply, error_reply

from conversation.goal_cases import GOAL_ID, INSTRUCTIONS, domain_with_goal, goal_case
from traceladder.produce.agent.user_sim import STOP_TOKEN
from traceladder.store.db import Store
from traceladder.store.runs import verdicts

AGENTS = ROOT / "tests" / "subject" / "agents"
PLAIN = str(ROOT / "examples" / "agents" / "plain_openai.py") + ":run"
USER_SPANS = "SELECT span_id FROM spans WHERE attributes->>'$.\"traceladder.role\"' = 'simulated_user'"
ROOTS = """
SELECT ct.turn, ct.agent_status, ct.error_type, ct.error_message, r.verdict, r.explanation,
       s.attributes->>'$."traceladder.user.ended"'
FROM case_turns ct LEFT JOIN trace_results r USING (trace_id)
JOIN spans s ON s.trace_id = ct.trace_id AND s.parent_span_id IS NULL
WHERE ct.run_id = ? ORDER BY ct.turn
"""


def _run(domain: Path, db: Path, *extra: str, env: dict[str, str] | None = None):
    return cli("run", "--domain", str(domain), "--case", GOAL_ID, "--db", str(db), *extra, env=env)


def _conversation(db: Path) -> tuple[str, int | None, str, int]:
    ((verdict, deciding, reason, turns),) = rows(
        db, "SELECT verdict, deciding_turn, reason, turns FROM conversation_results"
    )
    return verdict, deciding, reason, turns


def _calls(db: Path) -> list[tuple[str, dict[str, Any]]]:
    found = rows(db, "SELECT tool_name, arguments_raw FROM tool_calls ORDER BY trace_id, ordinal")
    return [(tool, json.loads(arguments)) for tool, arguments in found]


def _case_verdict(db: Path, run_id: str) -> tuple[str, str | None]:
    with Store(db) as store:
        return verdicts(store, run_id)[(GOAL_ID, 0)]


GOLDEN = [
    ("search_flights", {"origin": "SFO", "destination": "JFK", "date": "2026-11-02"}),
    ("book_flight", {"flight_id": "UA-512"}),
]


def test_sim_user_playing_against_sim_oracle_meets_the_goal(tmp_path: Path) -> None:
    domain = domain_with_goal(tmp_path)
    db = tmp_path / "oracle.duckdb"
    done = _run(domain, db, "--model", "sim:oracle", "--user-model", "sim:user")
    assert done.returncode == 0, done.stderr[-2000:]
    run_id = out_value(done, "run_id")
    # sim:user opens with the goal's instructions; sim:oracle answers them with the goal's calls
    # and a statement, so the user says it is done after turn 1
    played = rows(db, ROOTS, [run_id])
    assert [(p[0], p[1], p[4], p[6]) for p in played] == [(0, "ok", "PASS", "stop")]
    assert _calls(db) == GOLDEN
    assert _conversation(db)[0] == "PASS"
    assert _case_verdict(db, run_id) == ("PASS", None)
    # the user's two requests (the opening, the stop) are spans of the turn's trace, marked
    user = rows(
        db,
        "SELECT s.name, s.attributes->>'$.\"gen_ai.output.messages\"' FROM spans s "
        "WHERE s.attributes->>'$.\"traceladder.role\"' = 'simulated_user' ORDER BY s.start_ns",
    )
    assert [name for name, _ in user] == ["chat sim:user", "chat sim:user"]
    said = [json.loads(output)[0]["parts"][0]["content"] for _, output in user]
    assert said == [INSTRUCTIONS, STOP_TOKEN]
    # … and the agent's first request carries the user's message as its user message
    first = rows(
        db,
        "SELECT attributes->>'$.\"gen_ai.input.messages\"' FROM spans WHERE name = 'chat sim:oracle' "
        "ORDER BY start_ns LIMIT 1",
    )[0][0]
    assert json.loads(first)[-1] == {"role": "user", "parts": [{"type": "text", "content": INSTRUCTIONS}]}


def _never_acts(answer: str):
    """An agent model that never calls a tool: it answers every request with `answer`."""

    def override(body: dict[str, Any]) -> Reply | None:
        return chat_reply({"role": "assistant", "content": answer})

    return override


@pytest.mark.parametrize(
    ("answer", "turns", "ended"),
    [
        ("Sorry, I cannot book flights.", 1, "stop"),  # sim:user is done after a statement
        ("Which airline do you prefer?", 3, "max_turns"),  # … and confirms a question, to max_turns
    ],
)
def test_a_model_that_never_calls_the_tool_fails_the_goal_with_the_reason(
    tmp_path: Path, answer: str, turns: int, ended: str
) -> None:
    domain = domain_with_goal(tmp_path)
    db = tmp_path / "never.duckdb"
    with ModelServer(domain, override=_never_acts(answer)) as server:
        done = _run(domain, db, "--model", "never-acts", "--base-url", server.url, "--user-model", "sim:user")
    assert done.returncode == 0, done.stderr[-2000:]
    run_id = out_value(done, "run_id")
    played = rows(db, ROOTS, [run_id])
    assert [p[0] for p in played] == list(range(turns))
    assert all(p[1] == "ok" and p[4] == "PASS" for p in played)  # each turn alone did nothing wrong
    assert played[-1][6] == ended and all(p[6] is None for p in played[:-1])
    assert _calls(db) == []
    verdict, deciding, reason, counted = _conversation(db)
    assert (verdict, deciding, counted) == ("FAIL", turns - 1, turns)
    assert reason.startswith(
        f"GOAL_NOT_MET at turn {turns}: the conversation ended after {turns} turn(s)"  # counted from 1
    )
    assert "search_flights was never called" in reason
    assert rows(db, "SELECT finding_class, rule FROM conversation_findings") == [("GOAL_NOT_MET", GOAL_ID)]
    assert _case_verdict(db, run_id) == ("FAIL", "GOAL_NOT_MET")


USER_MODEL = "user-llm"


def _user_model(script: list[Reply]):
    """Requests naming USER_MODEL get `script`'s replies in order (the last one repeated); the
    rest are the agent's, answered as sim:oracle."""
    sent: list[dict[str, Any]] = []

    def override(body: dict[str, Any]) -> Reply | None:
        if body.get("model") != USER_MODEL:
            return None
        sent.append(body)
        return script[min(len(sent), len(script)) - 1]

    return override, sent


def test_an_openai_user_model_plays_the_user_and_its_spans_are_never_the_agents(tmp_path: Path) -> None:
    domain = domain_with_goal(tmp_path)
    db = tmp_path / "llm-user.duckdb"
    # A user model that, besides its message, sends a tool call of its own: were its span read as
    # the agent's, that call would be a row, a schema finding and a failed goal.
    opening = chat_reply(
        {"role": "assistant", "content": INSTRUCTIONS, "tool_calls": [
            {"id": "call_user", "type": "function",
             "function": {"name": "book_flight", "arguments": json.dumps({"flight_id": "XX-999"})}}]},
        "tool_calls",
    )  # fmt: skip
    override, sent = _user_model([opening, chat_reply({"role": "assistant", "content": STOP_TOKEN})])
    with ModelServer(domain, override=override) as server:
        done = _run(domain, db, "--model", "agent-llm", "--base-url", server.url, "--user-model", USER_MODEL)
    assert done.returncode == 0, done.stderr[-2000:]
    run_id = out_value(done, "run_id")
    # the user model was told the goal and the stop token, and saw the dialogue with roles turned
    assert len(sent) == 2
    system = sent[0]["messages"][0]
    assert (
        system["role"] == "system" and INSTRUCTIONS in system["content"] and STOP_TOKEN in system["content"]
    )
    assert [m["role"] for m in sent[1]["messages"]] == ["system", "user", "assistant", "user"]
    assert sent[1]["messages"][2]["content"] == INSTRUCTIONS
    # only the agent's calls are rows; the user's span is no LLM request of the agent
    assert _calls(db) == GOLDEN
    assert rows(db, "SELECT count(*) FROM prior_calls") == [(0,)]
    user_spans = {r[0] for r in rows(db, USER_SPANS)}
    assert len(user_spans) == 2
    roles = rows(db, f"SELECT DISTINCT coalesce(role, 'none') FROM spans WHERE span_id IN ({USER_SPANS})")
    assert roles == [("none",)]
    agent_requests = rows(db, "SELECT count(*) FROM spans WHERE name = 'chat agent-llm'")[0][0]
    assert rows(db, "SELECT count(*) FROM spans WHERE role = 'llm'") == [(agent_requests,)]
    assert rows(db, "SELECT count(*) FROM findings WHERE message LIKE '%XX-999%'") == [(0,)]
    assert [(p[1], p[4]) for p in rows(db, ROOTS, [run_id])] == [("ok", "PASS")]
    assert _conversation(db)[0] == "PASS"


@pytest.mark.parametrize("fails_at", [1, 2])  # the opening message, the reply to turn 1's answer
def test_a_failing_user_model_is_a_clear_per_case_error_never_the_agents(
    tmp_path: Path, fails_at: int
) -> None:
    domain = domain_with_goal(tmp_path, goal_case(max_turns=2))
    db = tmp_path / "user-fails.duckdb"
    broken = error_reply(500, "the user model is down")
    script = (
        [broken] if fails_at == 1 else [chat_reply({"role": "assistant", "content": INSTRUCTIONS}), broken]
    )
    override, sent = _user_model(script)
    with ModelServer(domain, override=override) as server:
        done = _run(domain, db, "--model", "agent-llm", "--base-url", server.url, "--user-model", USER_MODEL)
    # the one case ended in an error, so nothing was measured: one line naming the cause, exit 2
    assert done.returncode == 2, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and "most often user_model_error" in done.stderr
    ((run_id,),) = rows(db, "SELECT run_id FROM runs")
    assert len(sent) == fails_at
    played = rows(db, ROOTS, [run_id])
    assert len(played) == 1  # the conversation ends at the turn the user failed in
    turn, status, error_type, message, verdict, explanation, _ = played[0]
    assert (turn, status, error_type) == (0, "error", "user_model_error")
    assert message == f"the user model {USER_MODEL} answered HTTP 500"
    # never blamed on the agent, never a pass: not evaluated, saying why
    assert verdict == "NOT_EVALUATED" and "simulated user failed" in explanation
    assert _conversation(db)[0] == "NOT_EVALUATED"
    assert rows(db, "SELECT count(*) FROM conversation_findings") == [(0,)]
    # the agent's calls of turn 1 (when it got that far) are still its own rows
    assert _calls(db) == (GOLDEN if fails_at == 2 else [])


def test_an_agent_under_test_plays_against_the_simulated_user(tmp_path: Path) -> None:
    domain = domain_with_goal(tmp_path)
    for name, flags, env in (
        ("python", ("--agent", PLAIN), None),
        ("command", ("--agent-cmd", f"{sys.executable} {AGENTS / 'turns_cmd.py'}"),
         {"TURNS_LOG": str(tmp_path / "turns.jsonl")}),
    ):  # fmt: skip
        db = tmp_path / f"{name}.duckdb"
        done = _run(domain, db, *flags, "--model", "sim:oracle", "--user-model", "sim:user", env=env)
        assert done.returncode == 0, (name, done.stderr[-2000:])
        run_id = out_value(done, "run_id")
        assert [(p[1], p[4], p[6]) for p in rows(db, ROOTS, [run_id])] == [("ok", "PASS", "stop")], name
        assert _calls(db) == GOLDEN, name
        assert _conversation(db)[0] == "PASS", name
        assert len(rows(db, USER_SPANS)) == 2, name
    # the command got the simulated user's message as the case's messages
    (logged,) = [json.loads(line) for line in (tmp_path / "turns.jsonl").read_text().splitlines()]
    assert logged["messages"] == [{"role": "user", "content": INSTRUCTIONS}]


def test_a_goal_case_without_a_usable_user_model_is_one_line_and_runs_nothing(tmp_path: Path) -> None:
    domain = domain_with_goal(tmp_path)
    for flags, says in (
        ((), "gives a user goal: pass --user-model"),
        (("--user-model", "sim:oracle"), "the simulated user is sim:user"),
    ):
        db = tmp_path / "none.duckdb"
        done = _run(domain, db, "--model", "sim:oracle", *flags)
        assert done.returncode == 2, done.stderr[-2000:]
        assert done.stderr.count("\n") == 1 and says in done.stderr and "Traceback" not in done.stderr
        assert not db.exists() or rows(db, "SELECT count(*) FROM runs") == [(0,)]


@pytest.mark.parametrize(
    ("change", "field", "says"),
    [
        ({"max_turns": 0}, "user_goal.max_turns", "must be an integer from 1 to 50"),
        ({"max_turns": True}, "user_goal.max_turns", "must be an integer from 1 to 50"),
        ({"instructions": "  "}, "user_goal.instructions", "must be a non-empty string"),
        ({"mood": "angry"}, "user_goal.mood", "unknown field"),
        ({"golden": {"calls": [{"tool": "drop_db", "params": {}}], "order_sensitive": False}},
         "user_goal.golden.calls[0].tool", "is not a tool of the"),
    ],
)  # fmt: skip
def test_a_bad_user_goal_is_one_line_per_fault(tmp_path: Path, change: dict, field: str, says: str) -> None:
    goal = {**goal_case()["user_goal"], **change}
    domain = domain_with_goal(tmp_path, _with_goal(goal))
    done = cli("cases", "validate", "--domain", str(domain))
    assert done.returncode == 2, done.stdout + done.stderr
    assert field in done.stderr and says in done.stderr and "Traceback" not in done.stderr


def _with_goal(goal: dict) -> dict:
    record = goal_case()
    record["user_goal"] = goal
    return record


def test_turns_and_a_user_goal_together_are_refused(tmp_path: Path) -> None:
    record = {**goal_case(), "turns": [{"user": "hi", "golden": {"calls": [], "order_sensitive": False}}]}
    done = cli("cases", "validate", "--domain", str(domain_with_goal(tmp_path, record)))
    assert done.returncode == 2
    assert "give either turns (scripted messages) or user_goal, not both" in done.stderr


def _asks_first(body: dict[str, Any]) -> Reply | None:
    """An agent model that asks before it acts: turn 1 a question; turn 2 (after the user's yes)
    the search, then the booking, then a statement."""
    messages = body["messages"]
    users = [i for i, m in enumerate(messages) if m["role"] == "user"]
    if len(users) == 1:
        return chat_reply(
            {"role": "assistant", "content": "Shall I search SFO to JFK on 2026-11-02 and book?"}
        )
    step = sum(1 for m in messages[users[-1] :] if m["role"] == "assistant")
    if step >= len(GOLDEN):
        return chat_reply({"role": "assistant", "content": "Booked UA-512."})
    tool, arguments = GOLDEN[step]
    call = {
        "id": f"call_{step}",
        "type": "function",
        "function": {"name": tool, "arguments": json.dumps(arguments)},
    }
    return chat_reply({"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls")


def test_a_goal_met_across_turns_passes_and_records_as_scripted_turns(tmp_path: Path) -> None:
    domain = domain_with_goal(tmp_path)
    db = tmp_path / "asks.duckdb"
    with ModelServer(domain, override=_asks_first) as server:
        done = _run(domain, db, "--model", "asks-first", "--base-url", server.url, "--user-model", "sim:user")
    assert done.returncode == 0, done.stderr[-2000:]
    run_id = out_value(done, "run_id")
    # turn 1 asks (no call: alone, it did nothing wrong), sim:user confirms, turn 2 acts
    assert [(p[0], p[4], p[6]) for p in rows(db, ROOTS, [run_id])] == [(0, "PASS", None), (1, "PASS", "stop")]
    assert _calls(db) == GOLDEN
    assert _conversation(db)[:2] == ("PASS", None)
    assert _case_verdict(db, run_id) == ("PASS", None)
    # a recorded goal conversation becomes scripted turns: what the user actually said
    out = tmp_path / "recorded"
    made = cli("cases", "from-traces", "--db", str(db), "--out", str(out))
    assert made.returncode == 0, made.stderr[-2000:]
    (case,) = [json.loads(line) for line in (out / "cases.jsonl").read_text().splitlines()]
    assert case["schema"] == "MultiTurnCaseV1" and "user_goal" not in case
    assert [t["user"] for t in case["turns"]] == [INSTRUCTIONS, "Yes, please go ahead."]
    assert [[(c["tool"], c["params"]) for c in t["golden"]["calls"]] for t in case["turns"]] == [[], GOLDEN]
