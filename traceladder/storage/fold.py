"""Folding receiver segments into the DuckDB store (see `storage.segments` for the design)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import pyarrow as pa
import pyarrow.parquet as pq

from traceladder.otlp.rows import LOG_SCHEMA
from traceladder.storage.db import Store
from traceladder.storage.segments import Segment, batches, pending, segment_root
from traceladder.storage.spans import SPAN_SCHEMA
from traceladder.storage.writes import SegmentRecord, write_batch

log = logging.getLogger(__name__)

LOG_ROW_SCHEMA = LOG_SCHEMA.append(pa.field("source", pa.string(), nullable=False))
_SCHEMAS = {"spans": SPAN_SCHEMA, "logs": LOG_ROW_SCHEMA}
# One transaction per ~this many rows: bounded memory, and other processes waiting for the
# store's lock get a turn between transactions.
FOLD_ROWS = 100_000


class FoldResult(NamedTuple):
    segments: int
    spans: int  # new rows; re-sent rows are not counted
    logs: int
    damaged: int


def _read(segment: Segment) -> pa.Table | None:
    try:
        return (
            pq.read_table(segment.path).select(_SCHEMAS[segment.signal].names).cast(_SCHEMAS[segment.signal])
        )
    except (OSError, ValueError, KeyError, pa.ArrowException) as exc:
        log.warning("segment %s cannot be read (%s); moved aside to damaged/", segment.path, exc)
        return None


def _set_aside(segment: Segment, root: Path) -> None:
    damaged = root / "damaged"
    damaged.mkdir(exist_ok=True)
    segment.path.replace(damaged / f"{segment.signal}-{segment.path.name}")


def fold_pending(
    store: Store, root: Path | None = None, max_rows: int = FOLD_ROWS, until: Callable[[], bool] | None = None
) -> FoldResult:
    """Fold every complete segment of the store's receiver into the store; idempotent. `until`,
    checked between transactions, stops early (what is left stays pending, safe on disk)."""
    root = segment_root(store.path) if root is None else root
    segments = pending(root) if root.is_dir() else []
    if not segments:
        return FoldResult(0, 0, 0, 0)
    names = [s.name for s in segments]
    done = {
        r[0]
        for r in store.fetchall("SELECT name FROM ingested_segments WHERE list_contains(?, name)", [names])
    }
    for segment in segments:  # folded by a process that died before unlinking
        if segment.name in done:
            segment.path.unlink(missing_ok=True)
    todo = [s for s in segments if s.name not in done]
    folded = spans = logs = damaged = 0
    for group in batches(todo, max_rows):
        if until is not None and until():
            break
        tables: dict[str, list[pa.Table]] = {"spans": [], "logs": []}
        records = []
        for segment in group:
            table = _read(segment)
            if table is None:
                _set_aside(segment, root)
                damaged += 1
                continue
            tables[segment.signal].append(table)
            records.append(SegmentRecord(segment.name, segment.signal, table.num_rows))
        counts = write_batch(
            store,
            spans=pa.concat_tables(tables["spans"]) if tables["spans"] else None,
            logs=pa.concat_tables(tables["logs"]) if tables["logs"] else None,
            segments=records,
        )
        for segment in group:
            segment.path.unlink(missing_ok=True)
        # The records only guard the window between commit and unlink; that window has passed.
        store.execute(
            "DELETE FROM ingested_segments WHERE list_contains(?, name)", [[r.name for r in records]]
        )
        folded += len(records)
        spans += counts.spans
        logs += counts.logs
    return FoldResult(folded, spans, logs, damaged)
