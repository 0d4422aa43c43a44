"""Grouping traces into conversations, incrementally, from what the extraction stage derived.

Runs in the writer's transaction after a batch's derived rows are stored (`store.derive`), over
the registered `affected_traces`. Three steps, all set-based:

1. **Link earlier calls.** Each `prior_calls` row (a call the first request's input of a trace
   already held) is linked to the call of the trace that made it: the same call id and tool name,
   else (no id) the same tool and arguments, in a trace that started before — the latest such. A
   history that repeats a call id with *other* arguments links to nothing (the history contradicts
   the earlier turn; the call is counted in neither trace twice, since prior calls are never rows).
   Rows left unlinked are tried again when later batches bring the calls they name.
2. **Which conversation.** A trace whose producer names a conversation (`conversation_keys`) is in
   that one — its key, or `key@service` when traces of several services claim the key (two
   services' conversations never merge on a shared id). Else a trace linked to an earlier trace
   continues that trace's conversation (`linked_by = 'history'`); else it starts its own, named by
   its trace id (`linked_by = 'none'`).
3. **Turns.** Every touched conversation is renumbered by its traces' start (0-based `turn`), so a
   turn that arrives late takes its place and the later ones move up.

Touched: the affected traces, traces sharing their keys, and the traces linked to or from them,
followed both ways until nothing new is found.
"""

from __future__ import annotations

import contextlib
from typing import Any

import duckdb
import pyarrow as pa

from traceladder.store.derived import Stamp

_LINK = """
UPDATE prior_calls p SET earlier_trace_id = m.earlier_trace_id, earlier_ordinal = m.earlier_ordinal
FROM (
    SELECT p.trace_id, p.ordinal, arg_max(c.trace_id, struct_pack(s := e.start_ns, t := c.trace_id))
               AS earlier_trace_id,
           arg_max(c.ordinal, struct_pack(s := e.start_ns, t := c.trace_id)) AS earlier_ordinal
    FROM prior_calls p
    JOIN traces me ON me.trace_id = p.trace_id
    JOIN tool_calls c ON c.trace_id <> p.trace_id AND c.tool_name = p.tool_name
        AND (p.call_id IS NULL OR c.call_id = p.call_id)
        AND coalesce(json(try_cast(c.arguments_raw AS JSON))::VARCHAR, c.arguments_raw, '')
            = coalesce(json(try_cast(p.arguments_raw AS JSON))::VARCHAR, p.arguments_raw, '')
    JOIN traces e ON e.trace_id = c.trace_id AND e.start_ns <= me.start_ns
    WHERE p.earlier_trace_id IS NULL
      AND (p.trace_id IN (SELECT trace_id FROM affected_traces)
           OR c.trace_id IN (SELECT trace_id FROM affected_traces))
    GROUP BY p.trace_id, p.ordinal
) m
WHERE p.trace_id = m.trace_id AND p.ordinal = m.ordinal
"""

_NEIGHBOURS = """
SELECT DISTINCT k2.trace_id FROM conversation_keys k1
JOIN conversation_keys k2 USING (conversation_key) WHERE k1.trace_id IN (SELECT unnest($ids))
UNION SELECT DISTINCT earlier_trace_id FROM prior_calls
WHERE trace_id IN (SELECT unnest($ids)) AND earlier_trace_id IS NOT NULL
UNION SELECT DISTINCT trace_id FROM prior_calls WHERE earlier_trace_id IN (SELECT unnest($ids))
"""

# Per touched trace: start, service, key, and the earlier trace it links to (the latest one).
_FACTS = """
SELECT t.trace_id, t.start_ns, t.service, k.linked_by, k.conversation_key,
       (SELECT arg_max(p.earlier_trace_id, e.start_ns) FROM prior_calls p
        JOIN traces e ON e.trace_id = p.earlier_trace_id WHERE p.trace_id = t.trace_id) AS earlier,
       (SELECT count(DISTINCT coalesce(t2.service, '')) FROM conversation_keys k2
        JOIN traces t2 USING (trace_id) WHERE k2.conversation_key = k.conversation_key) AS services
FROM traces t LEFT JOIN conversation_keys k USING (trace_id)
WHERE t.trace_id IN (SELECT unnest($ids))
"""

_RENUMBER = """
UPDATE conversations c SET turn = n.turn FROM (
    SELECT c.trace_id, (row_number() OVER (PARTITION BY c.conversation_id
                        ORDER BY t.start_ns NULLS LAST, c.trace_id) - 1)::INTEGER AS turn
    FROM conversations c JOIN traces t USING (trace_id)
    WHERE c.conversation_id IN (SELECT unnest($ids))
) n WHERE c.trace_id = n.trace_id
"""


def _touched(conn: duckdb.DuckDBPyConnection) -> list[str]:
    found = {r[0] for r in conn.execute("SELECT trace_id FROM affected_traces").fetchall()}
    frontier = set(found)
    while frontier:
        rows = conn.execute(_NEIGHBOURS, {"ids": sorted(frontier)}).fetchall()
        frontier = {r[0] for r in rows if r[0] is not None} - found
        found |= frontier
    return sorted(found)


def _assign(facts: dict[str, tuple[Any, ...]], stored: dict[str, str]) -> dict[str, tuple[str, str]]:
    """trace id → (conversation id, linked_by), following history links to the earliest trace."""
    out: dict[str, tuple[str, str]] = {}

    def conversation(tid: str, depth: int = 0) -> str:
        if tid in out:
            return out[tid][0]
        row = facts.get(tid)
        if row is None:  # an earlier trace outside the touched set keeps its conversation
            return stored.get(tid, tid)
        _, _, service, linked_by, key, earlier, services = row
        if key is not None:
            out[tid] = (key if services <= 1 else f"{key}@{service or ''}", linked_by)
        elif earlier is not None and earlier != tid and depth < 10_000:
            out[tid] = (conversation(earlier, depth + 1), "history")
        else:
            out[tid] = (tid, "none")
        return out[tid][0]

    # earliest first, so a chain of history links resolves without deep recursion
    for tid in sorted(facts, key=lambda t: (facts[t][1] is None, facts[t][1] or 0, t)):
        conversation(tid)
    return out


def group_conversations(conn: duckdb.DuckDBPyConnection, stamp: Stamp) -> None:
    """Link the prior calls, then regroup and renumber every conversation the registered
    `affected_traces` touch (module docstring)."""
    conn.execute(_LINK)
    touched = _touched(conn)
    if not touched:
        return
    facts = {r[0]: r for r in conn.execute(_FACTS, {"ids": touched}).fetchall()}
    earlier = sorted({r[5] for r in facts.values() if r[5] is not None} - facts.keys())
    stored = dict(
        conn.execute(
            "SELECT trace_id, conversation_id FROM conversations WHERE trace_id IN (SELECT unnest($ids))",
            {"ids": earlier},
        ).fetchall()
    )
    assigned = _assign(facts, stored)
    old = [
        r[0]
        for r in conn.execute(
            "SELECT DISTINCT conversation_id FROM conversations WHERE trace_id IN (SELECT unnest($ids))",
            {"ids": touched},
        ).fetchall()
    ]
    conn.execute("DELETE FROM conversations WHERE trace_id IN (SELECT unnest($ids))", {"ids": touched})
    ordered = sorted(assigned.items())
    rows = pa.table(
        {
            "conversation_id": pa.array([cid for _, (cid, _) in ordered], pa.string()),
            "trace_id": pa.array([tid for tid, _ in ordered], pa.string()),
            "linked_by": pa.array([how for _, (_, how) in ordered], pa.string()),
            "service_name": pa.array([facts[tid][2] for tid, _ in ordered], pa.string()),
        }
    )
    # One insert of the batch's rows: `executemany` runs a statement per row (~2 ms each, measured:
    # most of the fold's conversation step).
    conn.register("conversation_rows", rows)
    try:
        conn.execute(
            "INSERT INTO conversations (conversation_id, trace_id, turn, linked_by, service_name, "
            "extraction, conventions) SELECT conversation_id, trace_id, 0, linked_by, service_name, $v, $c "
            "FROM conversation_rows",
            {"v": stamp.version, "c": stamp.conventions},
        )
    finally:
        with contextlib.suppress(duckdb.Error):  # inside an aborted transaction (`store.derive`)
            conn.unregister("conversation_rows")
    conn.execute(_RENUMBER, {"ids": sorted({cid for _, (cid, _) in ordered} | set(old))})
