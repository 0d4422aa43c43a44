"""Judging the conversations of the traces an evaluation judged: after their verdicts are written,
in the same transaction (`evaluate._Pass.finish`), every conversation one of them is in is
judged again — its `[conversation]` checks and its turns' verdicts (`evaluate.conversation_judge`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import duckdb
import orjson

from traceladder.evaluate.conversation_judge import Turn, judge_conversation
from traceladder.evaluate.goals import Goals
from traceladder.evaluate.rungs.policy import PolicySet
from traceladder.evaluate.rungs.types import Call, VerdictValue
from traceladder.store.conversation_results import (
    ConversationRow,
    StoredTurn,
    forget_results,
    idle_due,
    read_calls,
    read_case_tags,
    read_turns,
    write_results,
)

_JUDGED = frozenset({VerdictValue.PASS, VerdictValue.FAIL})


def _call(tool: str, raw: str | None, status: str, ordinal: int) -> Call:
    try:
        arguments = orjson.loads(raw) if raw is not None else None
        parsed = raw is not None
    except orjson.JSONDecodeError:
        arguments, parsed = None, False
    return Call(tool, arguments, raw, status != "error", ordinal=ordinal, parsed=parsed)


def _turn(t: StoredTurn, calls: dict[str, list[tuple[str, str | None, str, int]]]) -> Turn:
    return Turn(t.trace_id, t.verdict, [_call(*c) for c in calls.get(t.trace_id, ())])


def judge_conversations(
    conn: duckdb.DuckDBPyConnection,
    trace_ids: Sequence[str],
    policies: PolicySet | None,
    idle_since: datetime | None = None,
    goals: Goals | None = None,
) -> list[str]:
    """Judge and store every conversation of more than one turn that `trace_ids` touch; returns
    their ids. A one-turn conversation is its trace: its verdict is the trace's, stored once.
    `idle_since` (`watch --conversation-idle`): a conversation whose last turn gained a span after
    it may not be over — its stale verdict is dropped and it is judged once idle (`judge_idle`).
    `goals`: a goal case's conversation (its turns played by `run`, `case_turns`) is judged
    against its goal too (`evaluate.goals`), one turn or more."""
    policy = policies.for_conversation() if policies is not None else None
    busy = []
    conversations = read_turns(conn, trace_ids)
    tags = read_case_tags(conn, [t.trace_id for ts in conversations.values() for t in ts]) if goals else {}
    judged: list[tuple[str, list[StoredTurn], tuple[str | None, str] | None]] = []
    for cid, stored in conversations.items():
        tag = next((tags[t.trace_id] for t in stored if t.trace_id in tags), None)
        goal = tag if tag is not None and goals is not None and goals.known(*tag) else None
        if len(stored) < 2 and goal is None:
            continue
        if idle_since is not None and any(t.last_seen is None or t.last_seen > idle_since for t in stored):
            busy.append(cid)
            continue
        judged.append((cid, stored, goal))
    # The turns' calls are read only where a check reads them: the policy's `[conversation]`
    # checks, or a goal. Without either, a conversation's verdict folds its turns' verdicts, and
    # parsing every call of every turn was most of an open-path evaluation (issue 36).
    needed = [t.trace_id for _, stored, goal in judged if policy is not None or goal for t in stored]
    calls = read_calls(conn, needed)
    rows = []
    for cid, stored, goal in judged:
        turns = [_turn(t, calls) for t in stored]
        # The goal is judged only on a conversation that ended as a conversation: a turn that
        # ended in an error (the agent's or the simulated user's) or is not judged decides it.
        ended = all(t.verdict in _JUDGED for t in turns)
        extra = goals.findings(cid, *goal, [t.calls for t in turns]) if goal and goals and ended else []
        verdict, findings = judge_conversation(turns, policy, extra)
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
