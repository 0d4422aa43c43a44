"""Rebuilding derived rows from the stored spans (`traceladder reindex`), and telling whether a
store needs it.

The rebuild is batched by traces, each batch its own transaction: read everything stored of the
batch's traces, hand it to the extraction stage, write what it derives (the spans' derived
columns, calls, definitions, the trace index) as given. A trace is stale while its stamp in the
trace index (`traces.extraction`, `traces.conventions`) is not the current one, so an interrupted
rebuild resumes where it stopped, and a trace a writer (`serve`) re-derived meanwhile is current
already and skipped.
"""

from __future__ import annotations

import logging
from contextlib import suppress

import duckdb
import pyarrow as pa

from traceladder.errors import UserError, first_line
from traceladder.store.db import Store
from traceladder.store.derive import restore_span_columns, store_derived
from traceladder.store.derived import Batch, Extraction, Stamp, TraceRows
from traceladder.store.settings import _STALE, CONVENTIONS, recorded
from traceladder.store.writes import stored_rows

log = logging.getLogger(__name__)


def check_where(where: str | None) -> str:
    """`--where`: one SQL condition over the trace index's columns (`traces`), or TRUE."""
    if where is None or not where.strip():
        return "TRUE"
    if ";" in where:
        raise UserError("--where is one condition over the traces table, without ';'")
    return f"({where})"


def next_traces(
    store: Store, stamp: Stamp, where: str, after: str, max_traces: int, max_spans: int, force: bool
) -> list[str]:
    """The next traces to rebuild after `after` (trace id order): stale ones (all matching ones
    when `force`), as many as fit in `max_spans` stored spans (at least one) and `max_traces`."""
    stale = "TRUE" if force else _STALE
    # Without --where, traces whose spans no extraction ever read (no index row) are rebuilt too:
    # `--where` is a condition over the index, which knows nothing of them.
    unindexed = (
        " UNION ALL SELECT trace_id, count(*) FROM spans"
        " WHERE source IS DISTINCT FROM 'judge' AND trace_id > $after"  # a judge's trace has no index row
        " AND trace_id NOT IN (SELECT trace_id FROM traces) GROUP BY trace_id"
        if where == "TRUE"
        else ""
    )
    try:
        rows = store.fetchall(
            f"SELECT trace_id, sum(spans) OVER (ORDER BY trace_id) AS upto FROM ("
            f"  SELECT trace_id, spans FROM traces WHERE {stale} AND {where} AND trace_id > $after"
            f"{unindexed} ORDER BY trace_id LIMIT $limit) ORDER BY trace_id",
            {"version": stamp.version, "conventions": stamp.conventions, "after": after, "limit": max_traces}
            if not force
            else {"after": after, "limit": max_traces},
        )
    except duckdb.Error as exc:
        raise UserError(f"--where: {first_line(exc)}") from None
    out = [rows[0][0]] if rows else []
    out += [trace_id for trace_id, upto in rows[1:] if upto <= max_spans]
    return out


def rebuild_traces(store: Store, extraction: Extraction, trace_ids: list[str]) -> int:
    """Derive `trace_ids` again from what is stored, in one transaction; returns how many."""
    conventions = recorded(store, CONVENTIONS) or ""
    with store.lock, store.transaction() as conn:
        conn.register("wanted_traces", pa.table({"trace_id": pa.array(trace_ids, pa.string())}))
        try:
            rows = stored_rows(conn)
            # The stored spans are handed over as the batch: their derived columns come back.
            empty = TraceRows(rows.spans.slice(0, 0), rows.logs.slice(0, 0))
            derived = extraction.extract(
                Batch(rows.spans, None, TraceRows(empty.spans, rows.logs)), conventions
            )
            if derived.spans is not None and derived.spans.num_rows:
                restore_span_columns(conn, derived.spans)
            return store_derived(conn, derived, derived.trace_ids, arrived=False)
        finally:
            with suppress(duckdb.Error):  # refused inside an aborted transaction; replaced next time
                conn.unregister("wanted_traces")
