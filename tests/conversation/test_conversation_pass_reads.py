"""What the conversation pass of an evaluation asks DuckDB (issue 36, point 2; decision 661):
every conversation its traces touch is read and judged once, whole, whichever batches its turns
were judged in, and the turns' calls are read only where a check reads them (a policy's
`[conversation]` section, a goal) — with the verdicts they always had.

Two conversations of four turns each are ingested; the batch size is set to two traces, so each
conversation's turns lie in two batches (the trace ids sort by conversation, then turn). The
statements are recorded on the store's real DuckDB connection, wrapped so that every call goes
through to it unchanged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest
from recorded_connection import RecordedConnection

from conversation.otlp_turns import SCRIPT, Conversation, write
from tests.conftest import cli_in_process
from traceladder.evaluate import passes
from traceladder.evaluate.assemble import LiveOptions
from traceladder.evaluate.policy_file import load_policy
from traceladder.store.db import Store

POLICY = """
[conversation]
forbidden_tools = ["drop_*"]

[[conversation.confirm]]
tool = "request_*"
by = "confirm_action"
"""
TURNS_READ = "arg_max(r.verdict, r.evaluated_at)"  # the turns' latest verdicts: one read of turns
CALLS_READ = "arguments_raw, status, ordinal FROM tool_calls"  # the turns' calls


@pytest.fixture
def two_conversations(tmp_path: Path) -> Path:
    db = tmp_path / "c.duckdb"
    requests = []
    for name in ("ab", "cd"):
        convo = Conversation(name, key=f"conv-{name}")
        requests += [convo.turn(i, user, calls) for i, (user, calls) in enumerate(SCRIPT)]
    done = cli_in_process("ingest", "--db", str(db), write(tmp_path / "collector-c.jsonl", *requests))
    assert done.returncode == 0, done.stderr
    return db


def _evaluate(db: Path, live: LiveOptions, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setattr(passes, "BATCH_TRACES", 2)
    with Store(db) as store:
        recorded = RecordedConnection(store.conn)
        store.conn = recorded  # type: ignore[assignment]
        try:
            summary = passes.evaluate_store(store, live=live)
        finally:
            store.conn = recorded._conn
    assert summary.units == 8 and summary.conversations == 2
    return recorded.statements


def _verdicts(db: Path) -> list[tuple[Any, ...]]:
    with duckdb.connect(str(db), read_only=True) as conn:
        return conn.execute(
            "SELECT verdict, deciding_turn, reason, turns FROM conversation_results ORDER BY conversation_id"
        ).fetchall()


def test_each_conversation_is_read_once_and_no_call_without_a_check(two_conversations, monkeypatch):
    statements = _evaluate(two_conversations, LiveOptions(), monkeypatch)
    assert len([s for s in statements if TURNS_READ in s]) == 2  # one per conversation, not per batch
    assert not [s for s in statements if CALLS_READ in s]  # nothing reads a call without a policy
    verdicts = _verdicts(two_conversations)
    assert [(v, t) for v, _, _, t in verdicts] == [("NOT_EVALUATED", 4)] * 2


def test_with_a_conversation_policy_the_calls_are_read_once_and_checked(
    two_conversations, monkeypatch, tmp_path
):
    policy = tmp_path / "policy.toml"
    policy.write_text(POLICY, encoding="utf-8")
    statements = _evaluate(two_conversations, LiveOptions(policies=load_policy(policy)), monkeypatch)
    assert len([s for s in statements if TURNS_READ in s]) == 2
    assert len([s for s in statements if CALLS_READ in s]) == 2
    verdicts = _verdicts(two_conversations)
    assert [(v, t) for v, _, _, t in verdicts] == [("NOT_EVALUATED", 4)] * 2
