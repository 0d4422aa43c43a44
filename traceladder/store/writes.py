"""The one way rows enter the store: a batch of spans and/or log records in one transaction.

Idempotent: a span is identified by (trace_id, span_id) and a log record by its content hash, so
re-sent or re-ingested rows — and duplicates inside one batch — add nothing (the first one wins).

Inside the transaction: the rows already stored of the batch's traces that had some are read
(only those: a new trace is read from the batch alone), the extraction stage
(`store.derived.Extraction`; `traceladder.extract.STAGE` unless another is given) turns the
batch and them into derived rows, the batch is inserted with its spans' derived columns, and every
trace that gained a row gets the derived rows as given (`store.derive`) — so a trace split over
many requests and both signals ends up with the same calls as one sent whole. The stage reads with
the store's recorded conventions (`store.settings`). Receiver segments folded in by the same
transaction are recorded in `ingested_segments`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import NamedTuple

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from traceladder.decode.decoded import LOG_SCHEMA, ParsedSpan
from traceladder.store.collector import collector_paused
from traceladder.store.db import Store
from traceladder.store.derive import store_derived
from traceladder.store.derived import (
    DERIVED_SPAN_COLUMNS,
    STORED_LOG_COLUMNS,
    STORED_SPAN_COLUMNS,
    Batch,
    Extraction,
    TraceRows,
)
from traceladder.store.settings import CONVENTIONS, conventions_setting, record
from traceladder.store.spans import SPAN_COLUMNS

LOG_COLUMNS = (*LOG_SCHEMA.names, "source")


class SegmentRecord(NamedTuple):
    name: str
    signal: str
    rows: int


class WriteCounts(NamedTuple):
    spans: int  # new span rows (duplicates not counted)
    logs: int
    traces: int  # traces whose calls were derived again


def _numbered(table: pa.Table) -> pa.Table:
    return table.append_column("_row", pa.array(range(table.num_rows), pa.int64()))


def default_extraction() -> Extraction:
    """Ours. Imported here, on first write, only to wire the default: nothing in storage calls
    more of it than `Extraction.extract`, and storage never reads a span by convention."""
    from traceladder.extract import STAGE

    return STAGE


def stored_rows(conn: duckdb.DuckDBPyConnection, table: str = "wanted_traces") -> TraceRows:
    """Everything stored of the traces registered as `table` (a `trace_id` column)."""
    spans = conn.sql(
        f"SELECT {', '.join(STORED_SPAN_COLUMNS)} FROM spans SEMI JOIN {table} USING (trace_id) "
        "ORDER BY trace_id"
    ).to_arrow_table()
    logs = conn.sql(
        f"SELECT {', '.join(STORED_LOG_COLUMNS)} FROM log_records SEMI JOIN {table} USING (trace_id) "
        "ORDER BY trace_id"
    ).to_arrow_table()
    return TraceRows(spans, logs)


def _prior(
    conn: duckdb.DuckDBPyConnection, batches: dict[str, pa.Table], register: Callable[[str, pa.Table], None]
) -> TraceRows:
    """What is stored of the batch's traces that already had rows (the trace index says which:
    a batch of new traces reads nothing)."""
    ids = [b.column("trace_id") for b in batches.values()]
    candidates = pc.unique(pa.chunked_array([c for col in ids for c in col.chunks], pa.string()))
    register("batch_traces", pa.table({"trace_id": candidates.filter(pc.is_valid(candidates))}))
    had = conn.sql("SELECT trace_id FROM traces SEMI JOIN batch_traces USING (trace_id)").to_arrow_table()
    register("wanted_traces", had)
    return stored_rows(conn)


def _span_keys(spans: pa.Table) -> pa.ChunkedArray:
    # every decoder gives ids as hex: a NUL between them keeps two pairs from reading as one key
    return pc.binary_join_element_wise(spans.column("trace_id"), spans.column("span_id"), "\x00")


def new_spans(spans: pa.Table, stored: pa.Table) -> pa.Table:
    """The rows of `spans` to insert: the first of each (trace_id, span_id) in the batch, less those
    already `stored` (the stored spans of the batch's traces that had some, read in the same
    transaction: a span of a trace the index does not hold cannot be stored yet). Decided in Arrow
    on the batch alone, so the insert is a plain append: the anti-join against every stored span and
    a window over the wide rows cost more than storing them (bench/ingest_throughput.py)."""
    keys = _span_keys(spans)
    if pc.count_distinct(keys).as_py() != spans.num_rows:  # repeats inside the batch: keep the first
        first = (
            pa.table({"key": keys, "row": pa.array(range(spans.num_rows), pa.int64())})
            .group_by("key", use_threads=False)
            .aggregate([("row", "min")])
            .column("row_min")
        )
        spans = spans.take(pc.take(first, pc.sort_indices(first)))  # the first rows, in batch order
        keys = _span_keys(spans)
    if stored.num_rows:
        spans = spans.filter(pc.invert(pc.is_in(keys, value_set=_span_keys(stored).combine_chunks())))
    return spans


def _insert_spans(conn: duckdb.DuckDBPyConnection, spans: pa.Table) -> pa.Array:
    """Append `spans` (already only new ones: `new_spans`); returns their trace ids."""
    cols = ", ".join((*SPAN_COLUMNS, *DERIVED_SPAN_COLUMNS))
    conn.register("span_rows", spans)
    try:
        conn.execute(f"INSERT INTO spans ({cols}) SELECT {cols} FROM span_rows")
    finally:
        with suppress(duckdb.Error):  # inside an aborted transaction; see `_registered`
            conn.unregister("span_rows")
    return spans.column("trace_id").combine_chunks()


def _insert_logs(conn: duckdb.DuckDBPyConnection) -> pa.Array:
    cols = ", ".join(LOG_COLUMNS)
    return (
        conn.sql(
            f"INSERT INTO log_records ({cols}) SELECT {cols} FROM log_batch b WHERE NOT EXISTS "
            "(SELECT 1 FROM log_records l WHERE l.record_id = b.record_id) "
            "QUALIFY row_number() OVER (PARTITION BY record_id ORDER BY _row) = 1 "
            "RETURNING trace_id"
        )
        .to_arrow_table()
        .column(0)
    )


def _record_segments(
    conn: duckdb.DuckDBPyConnection,
    segments: Sequence[SegmentRecord],
    register: Callable[[str, pa.Table], None],
) -> None:
    """Record folded receiver segments in `ingested_segments`, in one insert (`executemany` runs a
    statement per row: ~2 ms each, measured, for a fold's hundred segments)."""
    register(
        "segment_rows",
        pa.table(
            {
                "name": pa.array([s.name for s in segments], pa.string()),
                "signal": pa.array([s.signal for s in segments], pa.string()),
                "rows": pa.array([s.rows for s in segments], pa.int64()),
            }
        ),
    )
    conn.execute(
        "INSERT INTO ingested_segments (name, signal, rows) SELECT name, signal, rows FROM segment_rows"
    )


@contextmanager
def _registered(store: Store) -> Iterator[Callable[[str, pa.Table], None]]:
    """A `register(name, table)` whose tables stay queryable until the transaction inside has
    ended. Unregistered outside it on purpose: DuckDB refuses to unregister inside an aborted
    transaction, and that refusal used to replace the error that aborted it (a row the store
    refused read as "Current transaction is aborted"); after the ROLLBACK, nothing of a failed
    attempt is left for a retry to trip on."""
    names: list[str] = []

    def register(name: str, table: pa.Table) -> None:
        store.conn.register(name, table)
        names.append(name)

    with store.lock:
        try:
            yield register
        finally:
            for name in names:
                with suppress(duckdb.Error):
                    store.conn.unregister(name)


def write_batch(
    store: Store,
    spans: pa.Table | None = None,
    logs: pa.Table | None = None,
    segments: Sequence[SegmentRecord] = (),
    extraction: Extraction | None = None,
    parsed: Sequence[ParsedSpan | None] | None = None,
) -> WriteCounts:
    """Insert spans (SPAN_SCHEMA) and log records (LOG_SCHEMA + source) in one transaction with
    the rows `extraction` derives from them, and record `segments` as ingested. `parsed`: per span
    row, its attributes and events as decoded, handed to the stage (`store.derived.Batch`). The
    cyclic collector is paused meanwhile (`store.collector`)."""
    with collector_paused():
        return _write_batch(store, spans, logs, segments, extraction, parsed)


def _write_batch(
    store: Store,
    spans: pa.Table | None,
    logs: pa.Table | None,
    segments: Sequence[SegmentRecord],
    extraction: Extraction | None,
    parsed: Sequence[ParsedSpan | None] | None,
) -> WriteCounts:
    stage = extraction if extraction is not None else default_extraction()
    conventions, first = conventions_setting(store)
    given = {}
    if spans is not None and spans.num_rows:
        given["span_batch"] = spans.select(list(SPAN_COLUMNS))
    if logs is not None and logs.num_rows:
        given["log_batch"] = logs.select(list(LOG_COLUMNS))
    if not given:
        if segments:
            with store.lock, _registered(store) as register, store.transaction() as conn:
                _record_segments(conn, segments, register)
        return WriteCounts(0, 0, 0)
    # One transaction under the store's lock: what is read, derived and written is one state.
    with store.lock, _registered(store) as register, store.transaction() as conn:
        prior = _prior(conn, given, register)
        batch = Batch(
            given.get("span_batch"), given.get("log_batch"), prior, parsed if "span_batch" in given else None
        )
        derived = stage.extract(batch, conventions)
        spans_in = given.pop("span_batch", None)
        if derived.spans is not None:
            spans_in = derived.spans.select([*SPAN_COLUMNS, *DERIVED_SPAN_COLUMNS])
        for name, table in given.items():
            register(name, _numbered(table))
        touched: list[pa.ChunkedArray | pa.Array] = []
        added_spans = new_logs = 0
        if spans_in is not None:
            ids = _insert_spans(conn, new_spans(spans_in, prior.spans))
            added_spans = len(ids)
            touched.append(ids)
        if "log_batch" in given:
            ids = _insert_logs(conn)
            new_logs = len(ids)
            touched.append(ids)
        traces = 0
        if touched:
            chunks = [c for t in touched for c in (t.chunks if isinstance(t, pa.ChunkedArray) else [t])]
            affected = pc.unique(pa.chunked_array(chunks, pa.string()))
            affected = affected.filter(pc.is_valid(affected))
            traces = store_derived(conn, derived, affected)
        if segments:
            _record_segments(conn, segments, register)
        if first:
            record(store, CONVENTIONS, conventions)
    return WriteCounts(added_spans, new_logs, traces)


def write_spans(store: Store, batch: pa.Table) -> int:
    """Insert a span batch (idempotent); returns the rows given (the exporter's contract)."""
    if batch.num_rows:
        write_batch(store, spans=batch)
    return batch.num_rows
