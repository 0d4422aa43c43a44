"""Judging the conversations of the traces an evaluation judged: after their verdicts are written,
in the same transaction (`evaluate._Pass.finish`), every conversation one of them is in is
judged again — its `[conversation]` checks and its turns' verdicts (`conversation.judge`)."""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import orjson

from traceladder.conversation.judge import Turn, judge_conversation
from traceladder.evaluators.policy import PolicySet
from traceladder.evaluators.types import Call
from traceladder.storage.conversation_results import ConversationRow, StoredTurn, read_turns, write_results


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
    conn: duckdb.DuckDBPyConnection, trace_ids: Sequence[str], policies: PolicySet | None
) -> int:
    """Judge and store every conversation of more than one turn that `trace_ids` touch; returns
    how many. A one-turn conversation is its trace: its verdict is the trace's, stored once."""
    policy = policies.for_conversation() if policies is not None else None
    rows = []
    for cid, stored in read_turns(conn, trace_ids).items():
        if len(stored) < 2:
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
    write_results(conn, rows)
    return len(rows)
