"""Reading a conversation's turns for judging, and writing its verdict and findings."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any, NamedTuple

import duckdb

# The conversations the traces belong to, every turn of each (not only the given traces: a turn
# judged now changes its whole conversation), each turn's latest verdict.
_TURNS = """
WITH touched AS (
    SELECT DISTINCT conversation_id FROM conversations WHERE trace_id IN (SELECT unnest($ids))
)
SELECT c.conversation_id, c.turn, c.trace_id,
       (SELECT arg_max(r.verdict, r.evaluated_at) FROM trace_results r WHERE r.trace_id = c.trace_id)
FROM conversations c SEMI JOIN touched USING (conversation_id)
ORDER BY c.conversation_id, c.turn
"""
_CALLS = """
SELECT trace_id, tool_name, arguments_raw, status, ordinal FROM tool_calls
WHERE trace_id IN (SELECT unnest($ids)) ORDER BY trace_id, ordinal
"""


class StoredTurn(NamedTuple):
    turn: int
    trace_id: str
    verdict: str | None
    calls: list[tuple[str, str | None, str, int]]  # tool_name, arguments_raw, status, ordinal


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
    for cid, turn, tid, verdict in rows:
        out.setdefault(cid, []).append(StoredTurn(turn, tid, verdict, calls.get(tid, [])))
    return out


def write_results(conn: duckdb.DuckDBPyConnection, rows: Iterable[ConversationRow]) -> None:
    """Replace the live (run-less) verdict and findings of each conversation in `rows`."""
    rows = list(rows)
    if not rows:
        return
    ids = [r.conversation_id for r in rows]
    conn.execute(
        "DELETE FROM conversation_results WHERE run_id IS NULL AND conversation_id IN (SELECT unnest($ids))",
        {"ids": ids},
    )
    conn.execute(
        "DELETE FROM conversation_findings WHERE conversation_id IN (SELECT unnest($ids))", {"ids": ids}
    )
    now = datetime.now(UTC).replace(tzinfo=None)
    conn.executemany(
        "INSERT INTO conversation_results VALUES (?, NULL, ?, ?, ?, ?, ?)",
        [(r.conversation_id, r.verdict, r.deciding_turn, r.reason, r.turns, now) for r in rows],
    )
    findings = [(r.conversation_id, *f) for r in rows for f in r.findings]
    if findings:
        conn.executemany("INSERT INTO conversation_findings VALUES (?, ?, ?, ?, ?)", findings)
