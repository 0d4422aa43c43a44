"""Reading a conversation's turns for judging, and writing its verdict and findings."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any, NamedTuple

import duckdb

from traceladder.store.bulk import insert_rows

# The conversations the traces belong to, every turn of each (not only the given traces: a turn
# judged now changes its whole conversation), each turn's latest verdict.
_TURNS = """
WITH touched AS (
    SELECT DISTINCT conversation_id FROM conversations WHERE trace_id IN (SELECT unnest($ids))
)
SELECT c.conversation_id, c.turn, c.trace_id,
       (SELECT arg_max(r.verdict, r.evaluated_at) FROM trace_results r WHERE r.trace_id = c.trace_id),
       (SELECT t.last_seen FROM traces t WHERE t.trace_id = c.trace_id)
FROM conversations c SEMI JOIN touched USING (conversation_id)
ORDER BY c.conversation_id, c.turn
"""
_CALLS = """
SELECT trace_id, tool_name, arguments_raw, status, ordinal FROM tool_calls
WHERE trace_id IN (SELECT unnest($ids)) ORDER BY trace_id, ordinal
"""


# The case a trace played a turn of in a run (`case_turns`), with the run's domain.
_CASE_TAGS = """
SELECT ct.trace_id, r.domain, ct.case_id FROM case_turns ct JOIN runs r USING (run_id)
WHERE ct.trace_id IN (SELECT unnest($ids))
"""


def read_case_tags(
    conn: duckdb.DuckDBPyConnection, trace_ids: Sequence[str]
) -> dict[str, tuple[str | None, str]]:
    """Trace id → (domain, case id) for every one of `trace_ids` that played a turn of a case."""
    if not trace_ids:
        return {}
    return {t: (d, c) for t, d, c in conn.execute(_CASE_TAGS, {"ids": list(trace_ids)}).fetchall()}


class StoredTurn(NamedTuple):
    turn: int
    trace_id: str
    verdict: str | None
    calls: list[tuple[str, str | None, str, int]]  # tool_name, arguments_raw, status, ordinal
    last_seen: datetime | None = None  # when its trace last gained a span


class ConversationRow(NamedTuple):
    conversation_id: str
    verdict: str
    deciding_turn: int | None
    reason: str
    turns: int
    findings: Sequence[tuple[int | None, str, str, str | None]]  # turn, class, message, rule


def read_turns(conn: duckdb.DuckDBPyConnection, trace_ids: Sequence[str]) -> dict[str, list[StoredTurn]]:
    """Conversation id → its turns in order, for every conversation one of `trace_ids` is in."""
    rows = conn.execute(_TURNS, {"ids": list(trace_ids)}).fetchall()
    calls: dict[str, list[Any]] = {}
    for tid, *call in conn.execute(_CALLS, {"ids": [r[2] for r in rows]}).fetchall():
        calls.setdefault(tid, []).append(tuple(call))
    out: dict[str, list[StoredTurn]] = {}
    for cid, turn, tid, verdict, seen in rows:
        out.setdefault(cid, []).append(StoredTurn(turn, tid, verdict, calls.get(tid, []), seen))
    return out


# Conversations of more than one turn idle since `$idle` whose live verdict is missing or older
# than one of their turns' results: one trace id of each (enough to find it again).
_IDLE_DUE = """
SELECT any_value(c.trace_id) FROM conversations c JOIN traces t USING (trace_id)
LEFT JOIN conversation_results r ON r.conversation_id = c.conversation_id AND r.run_id IS NULL
GROUP BY c.conversation_id
HAVING count(DISTINCT c.trace_id) > 1 AND max(t.last_seen) <= $idle
   AND (max(r.evaluated_at) IS NULL OR max(r.evaluated_at) < (
        SELECT max(x.evaluated_at) FROM trace_results x JOIN conversations y USING (trace_id)
        WHERE y.conversation_id = c.conversation_id))
"""


def idle_due(conn: duckdb.DuckDBPyConnection, idle: datetime) -> list[str]:
    """One trace id per conversation that is idle since `idle` and due to be judged again."""
    return [r[0] for r in conn.execute(_IDLE_DUE, {"idle": idle}).fetchall()]


def forget_results(conn: duckdb.DuckDBPyConnection, conversation_ids: Sequence[str]) -> None:
    """Drop the live verdict and findings of conversations that gained a turn and are not idle yet:
    a verdict of fewer turns than the conversation has would read as its verdict."""
    if conversation_ids:
        params = {"ids": list(conversation_ids)}
        wanted = "conversation_id IN (SELECT unnest($ids))"
        conn.execute(f"DELETE FROM conversation_results WHERE run_id IS NULL AND {wanted}", params)
        conn.execute(f"DELETE FROM conversation_findings WHERE {wanted}", params)


def write_results(conn: duckdb.DuckDBPyConnection, rows: Iterable[ConversationRow]) -> None:
    """Replace the live (run-less) verdict and findings of each conversation in `rows`."""
    rows = list(rows)
    if not rows:
        return
    forget_results(conn, [r.conversation_id for r in rows])
    now = datetime.now(UTC).replace(tzinfo=None)
    insert_rows(
        conn,
        "conversation_results",
        ("conversation_id", "verdict", "deciding_turn", "reason", "turns", "evaluated_at"),
        [(r.conversation_id, r.verdict, r.deciding_turn, r.reason, r.turns, now) for r in rows],
    )
    insert_rows(
        conn,
        "conversation_findings",
        ("conversation_id", "turn", "finding_class", "message", "rule"),
        [(r.conversation_id, *f) for r in rows for f in r.findings],
    )
