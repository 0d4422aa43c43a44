"""Judging conversations end to end: real ingest, real `evaluate --policy`, the verdicts read back.

The per-trace checks (a step budget of 2, duplicate calls forbidden) see only each turn's own
calls, so none fires on an earlier turn's call; the `[conversation]` confirm rule sees a request
in turn 1 confirmed in turn 2, and fails the conversation whose confirmation never comes."""

from __future__ import annotations

from pathlib import Path

import duckdb

from conversation.otlp_turns import SCRIPT, Conversation, write
from tests.conftest import cli, cli_in_process

POLICY = """
[defaults]
max_tool_calls = 2
forbid_duplicate_calls = true

[conversation]
forbidden_tools = ["drop_*"]

[[conversation.confirm]]
tool = "request_*"
by = "confirm_action"
"""


def _evaluate(tmp_path: Path, script: list) -> duckdb.DuckDBPyConnection:
    convo = Conversation("ab")
    turns = [convo.turn(i, user, calls) for i, (user, calls) in enumerate(script)]
    db, policy = tmp_path / "s.duckdb", tmp_path / "policy.toml"
    policy.write_text(POLICY, encoding="utf-8")
    assert (
        cli_in_process("ingest", "--db", str(db), write(tmp_path / "collector-c.jsonl", *turns)).returncode
        == 0
    )
    r = cli("evaluate", "--db", str(db), "--policy", str(policy))
    assert r.returncode == 0, r.stderr
    return duckdb.connect(str(db), read_only=True)


def test_no_per_trace_check_fires_on_an_earlier_turns_call_and_the_conversation_passes(
    tmp_path: Path,
) -> None:
    with _evaluate(tmp_path, SCRIPT) as conn:
        findings = conn.execute("SELECT code FROM findings").fetchall()
        assert findings == []
        assert conn.execute("SELECT DISTINCT verdict FROM trace_results").fetchall() == [("PASS",)]
        got = conn.execute(
            "SELECT verdict, deciding_turn, reason, turns FROM conversation_results"
        ).fetchall()
        assert got == [("PASS", None, "4 of 4 turns passed", 4)]
        assert conn.execute("SELECT count(*) FROM conversation_findings").fetchall() == [(0,)]


def test_a_request_never_confirmed_fails_the_conversation_at_its_turn(tmp_path: Path) -> None:
    unconfirmed = [SCRIPT[0], SCRIPT[1], ("No, leave it.", []), SCRIPT[3]]
    with _evaluate(tmp_path, unconfirmed) as conn:
        assert conn.execute("SELECT DISTINCT verdict FROM trace_results").fetchall() == [("PASS",)]
        verdict, turn, reason = conn.execute(
            "SELECT verdict, deciding_turn, reason FROM conversation_results"
        ).fetchone()
        assert (verdict, turn) == ("FAIL", 1)
        assert reason.startswith("UNCONFIRMED_ACTION at turn 2: request_cancel")
        assert conn.execute("SELECT turn, finding_class, rule FROM conversation_findings").fetchall() == [
            (1, "UNCONFIRMED_ACTION", "request_cancel")
        ]


def test_a_per_trace_limit_in_the_conversation_table_is_one_clear_line(tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text("[conversation]\nmax_latency_ms = 100\n", encoding="utf-8")
    r = cli("evaluate", "--db", str(tmp_path / "s.duckdb"), "--policy", str(policy))
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        f"traceladder: {policy}:2: max_latency_ms is checked per trace, not across a conversation's turns; "
        "put it under [defaults] (conversation checks: allowed_tools, forbidden_tools, max_tool_calls, "
        "forbid_duplicate_calls, confirm, parameters)"
    ]


def test_watch_judges_a_conversation_once_it_is_idle(tmp_path: Path) -> None:
    """With --conversation-idle, a conversation still receiving turns has no verdict (one of fewer
    turns would read as its verdict); once idle, `watch` judges it, and only once."""
    convo = Conversation("cd")
    turns = [convo.turn(i, user, calls) for i, (user, calls) in enumerate(SCRIPT)]
    db, policy = tmp_path / "s.duckdb", tmp_path / "policy.toml"
    policy.write_text(POLICY, encoding="utf-8")
    assert (
        cli_in_process("ingest", "--db", str(db), write(tmp_path / "collector-w.jsonl", *turns)).returncode
        == 0
    )
    base = ("watch", "--db", str(db), "--policy", str(policy), "--once", "--settle", "0")
    busy = cli(*base, "--conversation-idle", "86400")
    assert busy.returncode == 0, busy.stderr
    assert busy.stdout.strip() == "watched batches=1 judged=4 PASS=4 conversations=0"
    with duckdb.connect(str(db), read_only=True) as conn:
        assert conn.execute("SELECT count(*) FROM conversation_results").fetchall() == [(0,)]
    idle = cli(*base, "--conversation-idle", "0")
    assert idle.returncode == 0, idle.stderr
    assert idle.stdout.strip() == "watched batches=0 judged=0 conversations=1"
    again = cli(*base, "--conversation-idle", "0")
    assert again.stdout.strip() == "watched batches=0 judged=0 conversations=0"
    with duckdb.connect(str(db), read_only=True) as conn:
        assert conn.execute("SELECT verdict, turns FROM conversation_results").fetchall() == [("PASS", 4)]


def test_a_conversation_holding_a_40_mb_argument_is_judged(tmp_path: Path) -> None:
    """One large value in a turn's call (a 40 MB argument: DuckDB reads it into a buffer of
    64-256 MB whatever its cap) must not fail `evaluate`: the turns' calls are read inside the
    last batch's transaction, where an out-of-memory error aborts it and cannot be retried
    (decision 534). The request in turn 1 is confirmed in turn 2: the conversation passes.

    The large value is the confirmation's, in the last turn: every chat span carries the history
    so far, so a value in turn 1 was written four times (160 MB to ingest), one in turn 2 twice.
    It still fails without the pass's room (tried, decision 800); 20 MB does not (tried)."""
    big = {"order_id": "W1", "reason": "x" * 40_000_000}
    script = [
        ("Please cancel W1.", [("c2", "request_cancel", {"order_id": "W1"})]),
        ("Yes.", [("c3", "confirm_action", big)]),
    ]
    with _evaluate(tmp_path, script) as conn:
        got = conn.execute("SELECT verdict, turns FROM conversation_results").fetchall()
        assert got == [("PASS", 2)]
        assert conn.execute("SELECT max(length(arguments_raw)) FROM tool_calls").fetchone()[0] > 40_000_000
