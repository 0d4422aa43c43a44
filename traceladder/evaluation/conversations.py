"""Judging the conversations of the traces an evaluation judged: after their verdicts are written,
in the same transaction (`evaluate._Pass.finish`), every conversation one of them is in is
judged again — its `[conversation]` checks and its turns' verdicts (`conversation.judge`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import duckdb
import orjson

from traceladder.conversation.judge import Turn, judge_conversation
from traceladder.evaluators.policy import PolicySet
from traceladder.evaluators.types import Call
from traceladder.storage.conversation_results import (
    ConversationRow,
    StoredTurn,
    forget_results,
    idle_due,
    read_turns,
    write_results,
)


def _call(tool: str, raw: str | None, status: str, ordinal: int) -> Call:
    try:
        arguments = orjson.loads(raw) if raw is not None else None
        parsed = raw is not None
    except orjson.JSONDecodeError:
        arguments, parsed = None, False
    return Call(tool, arguments, raw, status != "error", ordinal=ordinal, parsed=parsed)


def _turn(t: StoredTurn) -> Turn:
    return Turn(t.trace_id, t.verdict, [_call(*c) for c in t.calls])


def judge_conversations(
    conn: duckdb.DuckDBPyConnection,
    trace_ids: Sequence[str],
    policies: PolicySet | None,
    idle_since: datetime | None = None,
) -> list[str]:
    """Judge and store every conversation of more than one turn that `trace_ids` touch; returns
    their ids. A one-turn conversation is its trace: its verdict is the trace's, stored once.
    `idle_since` (`watch --conversation-idle`): a conversation whose last turn gained a span after
    it may not be over — its stale verdict is dropped and it is judged once idle (`judge_idle`)."""
    policy = policies.for_conversation() if policies is not None else None
    rows = []
    busy = []
    for cid, stored in read_turns(conn, trace_ids).items():
        if len(stored) < 2:
            continue
        if idle_since is not None and any(t.last_seen is None or t.last_seen > idle_since for t in stored):
            busy.append(cid)
            continue
        verdict, findings = judge_conversation([_turn(t) for t in stored], policy)
        rows.append(
            ConversationRow(
                cid,
                verdict.verdict,
                verdict.deciding_turn,
                verdict.reason,
                len(stored),
                [(f.turn, f.finding_class, f.message, f.rule) for f in findings],
            )  # fmt: skip
        )
    forget_results(conn, busy)
    write_results(conn, rows)
    return [r.conversation_id for r in rows]


def judge_idle(conn: duckdb.DuckDBPyConnection, policies: PolicySet | None, idle_since: datetime) -> int:
    """Judge the conversations idle since `idle_since` whose verdict is missing or older than one
    of their turns' results (`watch`, every poll); returns how many."""
    due = idle_due(conn, idle_since)
    return len(judge_conversations(conn, due, policies, idle_since)) if due else 0
