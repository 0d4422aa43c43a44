"""Reading a conversation's turns for judging, and writing its verdict and findings.

Set-based, as every read of an evaluation (`store.readers`): the trace ids a query is about reach
it as a registered Arrow table, never as a list parameter a row each, and rows are written from
Arrow in one statement (`executemany` runs one statement per row in DuckDB, ~2 ms each).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, NamedTuple

import duckdb
import pyarrow as pa

from traceladder.store.bulk import insert_rows
from traceladder.store.db import trace_id_table

# The conversations a set of traces (`conversation_traces`) touches, each once: one trace id of
# each (enough to find it again) and its number of turns — only those a verdict is written for:
# more than one turn, or a turn played of a case (a goal case's conversation, `evaluate.goals`,
# may be one turn). A one-turn conversation is its trace (`evaluate.conversations`).
_TOUCHED = """
WITH touched AS (
    SELECT DISTINCT conversation_id FROM conversations SEMI JOIN conversation_traces USING (trace_id)
)
SELECT c.conversation_id, min(c.trace_id), count(*)
FROM conversations c SEMI JOIN touched USING (conversation_id)
LEFT JOIN case_turns ct ON ct.trace_id = c.trace_id
GROUP BY c.conversation_id
HAVING count(*) > 1 OR bool_or(ct.trace_id IS NOT NULL)
ORDER BY c.conversation_id
"""
# Every turn of the conversations the traces (`conversation_traces`) are in (not only the given
# traces: a turn judged now changes its whole conversation), each turn's latest verdict.
_TURNS = """
WITH touched AS (
    SELECT DISTINCT conversation_id FROM conversations SEMI JOIN conversation_traces USING (trace_id)
),
turns AS (
    SELECT conversation_id, turn, trace_id FROM conversations SEMI JOIN touched USING (conversation_id)
),
verdicts AS (
    SELECT r.trace_id, arg_max(r.verdict, r.evaluated_at) AS verdict
    FROM trace_results r SEMI JOIN turns USING (trace_id) GROUP BY r.trace_id
)
SELECT c.conversation_id, c.turn, c.trace_id, v.verdict, t.last_seen
FROM turns c
LEFT JOIN verdicts v ON v.trace_id = c.trace_id
LEFT JOIN traces t ON t.trace_id = c.trace_id
ORDER BY c.conversation_id, c.turn
"""
_CALLS = """
SELECT trace_id, tool_name, arguments_raw, status, ordinal FROM tool_calls
SEMI JOIN conversation_traces USING (trace_id) ORDER BY trace_id, ordinal
"""


# The case a trace played a turn of in a run (`case_turns`), with the run's domain.
_CASE_TAGS = """
SELECT ct.trace_id, r.domain, ct.case_id FROM case_turns ct JOIN runs r USING (run_id)
SEMI JOIN conversation_traces USING (trace_id)
"""


@contextmanager
def _traces(conn: duckdb.DuckDBPyConnection, trace_ids: Iterable[str] | pa.Array) -> Iterator[None]:
    """`trace_ids` queryable as `conversation_traces` on `conn` meanwhile."""
    conn.register("conversation_traces", trace_id_table(trace_ids))
    try:
        yield
    finally:
        conn.unregister("conversation_traces")


def touched_conversations(
    conn: duckdb.DuckDBPyConnection, trace_ids: pa.Array, most_turns: int
) -> Iterator[list[str]]:
    """The conversations with a turn among `trace_ids` that get a verdict (more than one turn, or a
    case's turn), each once, as one trace id of each, in groups of at most `most_turns` turns (a
    larger conversation alone): an evaluation judges each conversation once, whole, a group at a
    time, whichever of its batches its turns were judged in."""
    with _traces(conn, trace_ids):
        found = conn.execute(_TOUCHED).fetchall()
    group: list[str] = []
    turns = 0
    for _, trace_id, count in found:
        if group and turns + count > most_turns:
            yield group
            group, turns = [], 0
        group.append(trace_id)
        turns += count
    if group:
        yield group


def read_case_tags(
    conn: duckdb.DuckDBPyConnection, trace_ids: Sequence[str]
) -> dict[str, tuple[str | None, str]]:
    """Trace id → (domain, case id) for every one of `trace_ids` that played a turn of a case."""
    if not trace_ids:
        return {}
    with _traces(conn, trace_ids):
        return {t: (d, c) for t, d, c in conn.execute(_CASE_TAGS).fetchall()}


class StoredTurn(NamedTuple):
    turn: int
    trace_id: str
    verdict: str | None
    last_seen: datetime | None = None  # when its trace last gained a span


class ConversationRow(NamedTuple):
    conversation_id: str
    verdict: str
    deciding_turn: int | None
    reason: str
    turns: int
    findings: Sequence[tuple[int | None, str, str, str | None]]  # turn, class, message, rule


def read_turns(conn: duckdb.DuckDBPyConnection, trace_ids: Sequence[str]) -> dict[str, list[StoredTurn]]:
    """Conversation id → its turns in order, for every conversation one of `trace_ids` is in
    (their calls: `read_calls`, for the turns a check reads)."""
    with _traces(conn, trace_ids):
        rows = conn.execute(_TURNS).fetchall()
    out: dict[str, list[StoredTurn]] = {}
    for cid, turn, tid, verdict, seen in rows:
        out.setdefault(cid, []).append(StoredTurn(turn, tid, verdict, seen))
    return out


def read_calls(
    conn: duckdb.DuckDBPyConnection, trace_ids: Sequence[str]
) -> dict[str, list[tuple[str, str | None, str, int]]]:
    """Trace id → its tool calls in order (tool_name, arguments_raw, status, ordinal)."""
    if not trace_ids:
        return {}
    calls: dict[str, list[Any]] = {}
    with _traces(conn, trace_ids):
        for tid, *call in conn.execute(_CALLS).fetchall():
            calls.setdefault(tid, []).append(tuple(call))
    return calls


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
    if not conversation_ids:
        return
    conn.register(
        "forgotten_conversations", pa.table({"conversation_id": pa.array(conversation_ids, pa.string())})
    )
    try:
        wanted = "conversation_id IN (SELECT conversation_id FROM forgotten_conversations)"
        conn.execute(f"DELETE FROM conversation_results WHERE run_id IS NULL AND {wanted}")
        conn.execute(f"DELETE FROM conversation_findings WHERE {wanted}")
    finally:
        conn.unregister("forgotten_conversations")


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
