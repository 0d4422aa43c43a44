"""`watch`'s SQL: the traces due for judging and its watermark (`watch_state`). The only module
that holds SQL on `watch_state`.

A trace is due when it has no result or its result judged an older arrival (`judged_seq <
traces.seq`), its last span arrived before `settled` and its root arrived (or, with no root,
its last span arrived before `orphaned`). `record_watermark` runs inside the transaction that
writes the batch's results, so both commit or neither does.
"""

from __future__ import annotations

from datetime import datetime

import duckdb

from traceladder.store.db import Store

_DUE = """
SELECT t.trace_id
FROM traces t
LEFT JOIN trace_results r ON r.trace_id = t.trace_id
WHERE (r.trace_id IS NULL OR r.judged_seq < t.seq)
  AND t.last_seen <= $settled
  AND (t.has_root OR t.last_seen <= $orphaned)
  AND {sampled}
ORDER BY t.seq
LIMIT $limit
"""


def due_trace_ids(
    store: Store, *, settled: datetime, orphaned: datetime, sampled: str, limit: int
) -> list[str]:
    """The ids of at most `limit` due traces, oldest arrival first. `sampled` is the sampling
    rule's predicate over `t.trace_id` and `t.error` (`Sampling.sql`)."""
    params = {"settled": settled, "orphaned": orphaned, "limit": limit}
    return [row[0] for row in store.fetchall(_DUE.format(sampled=sampled), params)]


def record_watermark(conn: duckdb.DuckDBPyConnection, name: str, units: int, now: datetime) -> None:
    """Watch `name` judged `units` more traces: its count, and the highest `judged_seq` stored."""
    params = {"name": name}
    previous = conn.execute("SELECT max(judged) FROM watch_state WHERE name = $name", params).fetchone()
    judged = ((previous[0] if previous else None) or 0) + units
    conn.execute("DELETE FROM watch_state WHERE name = $name", params)
    conn.execute(
        "INSERT INTO watch_state"
        " SELECT $name, coalesce(max(judged_seq), 0), $judged, $now FROM trace_results",
        {**params, "judged": judged, "now": now},
    )
