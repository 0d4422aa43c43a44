"""Conversations in the store: the turns of a plain loop, ingested for real (the `ingest` command
into a DuckDB file), hold only their own calls, and group into one conversation — by the
producer's id or through the history — incrementally, whatever order the turns arrive in."""

from __future__ import annotations

from pathlib import Path

import duckdb

from conversation.otlp_turns import SCRIPT, Conversation, write
from tests.conftest import cli_in_process


def _ingest(db: Path, *files: str) -> None:
    r = cli_in_process("ingest", "--db", str(db), *files)
    assert r.returncode == 0, r.stderr


def _rows(db: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as conn:
        return conn.execute(sql).fetchall()


def _calls_per_trace(db: Path) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for tid, call_id in _rows(db, "SELECT trace_id, call_id FROM tool_calls ORDER BY trace_id, ordinal"):
        out.setdefault(tid, []).append(call_id)
    return out


def test_each_turn_holds_its_own_calls_and_the_turns_link_through_the_history(tmp_path: Path) -> None:
    convo = Conversation("a1")
    turns = [convo.turn(i, user, calls) for i, (user, calls) in enumerate(SCRIPT)]
    db = tmp_path / "s.duckdb"
    _ingest(db, write(tmp_path / "collector-turns.jsonl", *turns))
    assert _calls_per_trace(db) == {
        convo.trace_id(i): [c for c, _, _ in calls] for i, (_, calls) in enumerate(SCRIPT)
    }
    got = _rows(db, "SELECT conversation_id, trace_id, turn, linked_by FROM conversations ORDER BY turn")
    first = convo.trace_id(0)
    assert got == [(first, convo.trace_id(i), i, "none" if i == 0 else "history") for i in range(4)]
    # every earlier call a turn's history held is linked to the call of the turn that made it
    links = _rows(
        db,
        "SELECT p.trace_id, p.call_id, p.earlier_trace_id, c.call_id FROM prior_calls p "
        "JOIN tool_calls c ON c.trace_id = p.earlier_trace_id AND c.ordinal = p.earlier_ordinal "
        "ORDER BY p.trace_id, p.ordinal",
    )
    assert all(mine == theirs for _, mine, _, theirs in links) and len(links) == 1 + 2 + 3


def test_the_producers_id_groups_and_a_late_turn_takes_its_place(tmp_path: Path) -> None:
    convo = Conversation("b2", key="thread-42")
    turns = [convo.turn(i, user, calls) for i, (user, calls) in enumerate(SCRIPT)]
    db = tmp_path / "s.duckdb"
    _ingest(db, write(tmp_path / "collector-1.jsonl", turns[0], turns[1], turns[3]))
    _ingest(db, write(tmp_path / "collector-2.jsonl", turns[2]))  # turn 2 arrives last
    got = _rows(db, "SELECT conversation_id, trace_id, turn, linked_by FROM conversations ORDER BY turn")
    assert got == [("thread-42", convo.trace_id(i), i, "gen_ai.conversation.id") for i in range(4)]
    assert sum(len(c) for c in _calls_per_trace(db).values()) == 5  # no call counted twice


def test_a_late_earlier_turn_joins_a_history_linked_conversation(tmp_path: Path) -> None:
    convo = Conversation("c3")
    turns = [convo.turn(i, user, calls) for i, (user, calls) in enumerate(SCRIPT)]
    db = tmp_path / "s.duckdb"
    _ingest(db, write(tmp_path / "collector-1.jsonl", turns[0], turns[1], turns[3]))
    _ingest(db, write(tmp_path / "collector-2.jsonl", turns[2]))
    got = _rows(db, "SELECT conversation_id, turn, linked_by FROM conversations ORDER BY turn")
    assert got == [(convo.trace_id(0), i, "none" if i == 0 else "history") for i in range(4)]


def test_two_services_claiming_one_id_are_two_conversations(tmp_path: Path) -> None:
    a, b = Conversation("d4", key="session-1"), Conversation("e5", service="billing", key="session-1")
    requests = [a.turn(0, *SCRIPT[0]), b.turn(0, *SCRIPT[0]), a.turn(1, *SCRIPT[1]), b.turn(1, *SCRIPT[1])]
    db = tmp_path / "s.duckdb"
    _ingest(db, write(tmp_path / "collector-x.jsonl", *requests))
    got = _rows(db, "SELECT conversation_id, count(*), max(turn) FROM conversations GROUP BY 1 ORDER BY 1")
    assert got == [("session-1@billing", 2, 1), ("session-1@support-agent", 2, 1)]


def test_a_history_repeating_a_call_id_with_other_arguments_links_nothing_and_counts_once(
    tmp_path: Path,
) -> None:
    convo = Conversation("f6")
    first = convo.turn(0, *SCRIPT[0])
    # the history the next turn sends was edited: call c1 now asked for another order
    edited = convo.history[1]["parts"][0]
    edited["arguments"] = {"order_id": "W9"}
    second = convo.turn(1, *SCRIPT[1])
    db = tmp_path / "s.duckdb"
    _ingest(db, write(tmp_path / "collector-e.jsonl", first, second))
    assert _calls_per_trace(db) == {convo.trace_id(0): ["c1"], convo.trace_id(1): ["c2"]}
    assert _rows(db, "SELECT call_id, earlier_trace_id FROM prior_calls") == [("c1", None)]
    got = _rows(db, "SELECT trace_id, conversation_id, linked_by FROM conversations ORDER BY trace_id")
    assert got == [(convo.trace_id(i), convo.trace_id(i), "none") for i in range(2)]


def test_a_thousand_turn_conversation(tmp_path: Path) -> None:
    """A memory window of four messages: each turn's history holds only the previous turn's call,
    so the turns link one to the next, a chain a thousand deep."""
    convo = Conversation("a7", window=4)
    turns = [convo.turn(i, f"step {i}", [(f"k{i}", "get_order", {"order_id": f"W{i}"})]) for i in range(1000)]
    db = tmp_path / "s.duckdb"
    _ingest(db, write(tmp_path / "collector-long.jsonl", *turns))
    got = _rows(
        db, "SELECT conversation_id, count(*), max(turn), count(DISTINCT turn) FROM conversations GROUP BY 1"
    )
    assert got == [(convo.trace_id(0), 1000, 999, 1000)]
    assert _rows(db, "SELECT count(*) FROM tool_calls") == [(1000,)]
