"""Folding receiver segments into the DuckDB store (see `store.segments` for the design).

One segment can never stop the others. A segment is set aside to `<segments>/damaged/` — with a
`.reason` file beside it, and one warning for the whole fold — when its checksum does not match,
when it cannot be read, or when the store refuses its rows (attributes that are not JSON, text
that is not UTF-8): a group whose transaction the store refuses is folded again one segment at a
time, so only the refused segment is set aside and every other one is folded. A store that cannot
write at all (a full disk, a lost file) is different: every segment would fail alike, so the fold
stops and raises, and everything not yet folded stays pending, safe on disk.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from traceladder.decode.decoded import LOG_SCHEMA
from traceladder.errors import first_line
from traceladder.store.db import Store
from traceladder.store.derived import Extraction
from traceladder.store.segments import (
    ChecksumMismatch,
    Segment,
    batches,
    pending,
    read_verified,
    segment_root,
)
from traceladder.store.spans import SPAN_SCHEMA
from traceladder.store.writes import SegmentRecord, WriteCounts, write_batch
from traceladder.text import printable

log = logging.getLogger(__name__)

LOG_ROW_SCHEMA = LOG_SCHEMA.append(pa.field("source", pa.string(), nullable=False))
_SCHEMAS = {"spans": SPAN_SCHEMA, "logs": LOG_ROW_SCHEMA}
# One transaction per ~this many rows: bounded memory, and other processes waiting for the
# store's lock get a turn between transactions.
FOLD_ROWS = 100_000
DAMAGED = "damaged"
REASON_CHARS = 300
# Errors that say the store cannot write right now, whatever the rows: never a segment's fault.
_STORE_TROUBLE = (
    duckdb.OperationalError,  # I/O (a full disk), a failed commit, out of memory
    duckdb.FatalException,
    duckdb.InternalException,
    duckdb.PermissionException,
    OSError,
    MemoryError,
)


class FoldResult(NamedTuple):
    segments: int
    spans: int  # new rows; re-sent rows are not counted
    logs: int
    damaged: int  # set aside: unreadable, checksum mismatch, or rows the store refused


class Loaded(NamedTuple):
    segment: Segment
    table: pa.Table


def _cause(exc: BaseException) -> BaseException:
    """The error that aborted a transaction. Cleanup that runs inside the aborted transaction
    (unregistering a batch) fails with "Current transaction is aborted", which would otherwise
    hide the real reason — and read as trouble with the store rather than with the rows."""
    while (
        isinstance(exc, duckdb.TransactionException)
        and "transaction is aborted" in str(exc)
        and exc.__context__ is not None
    ):
        exc = exc.__context__
    return exc


def store_cannot_write(exc: BaseException) -> bool:
    """True when `exc` is about the store (disk, file, memory), not about the rows written."""
    exc = _cause(exc)
    return isinstance(exc, _STORE_TROUBLE) or "invalidated" in str(exc)


def _reason(what: str, exc: BaseException) -> str:
    """One printable line, cut short: a conversion error quotes the refused value, which can be a
    megabyte of someone else's attribute text. DuckDB's messages name their kind ("Conversion
    Error: …"); any other error is named by its type, so a bug in our own code reads as one."""
    cause = _cause(exc)
    text = first_line(cause)
    if not isinstance(cause, duckdb.Error):
        text = f"{type(cause).__name__}: {text}"
    text = printable(text)
    return f"{what}: {text[:REASON_CHARS]}{'…' if len(text) > REASON_CHARS else ''}"


def _refused(exc: BaseException) -> str:
    return _reason("the store refused its rows", exc)


def read_segment(segment: Segment) -> pa.Table:
    schema = _SCHEMAS[segment.signal]
    return pq.read_table(pa.BufferReader(read_verified(segment))).select(schema.names).cast(schema)


def load(group: Sequence[Segment], refuse: Callable[[Segment, str], None]) -> list[Loaded]:
    """The rows of each segment of `group`; a segment that cannot be read is `refuse`d with the
    reason, one gone since it was listed (removed by hand) is skipped."""
    loaded = []
    for segment in group:
        try:
            loaded.append(Loaded(segment, read_segment(segment)))
        except FileNotFoundError:
            continue
        except ChecksumMismatch as exc:
            refuse(segment, str(exc))
        except (OSError, ValueError, KeyError, pa.ArrowException) as exc:
            refuse(segment, _reason("cannot be read", exc))
    return loaded


def _set_aside(segment: Segment, root: Path, reason: str) -> None:
    damaged = root / DAMAGED
    damaged.mkdir(exist_ok=True)
    target = damaged / f"{segment.signal}-{segment.path.name}"
    segment.path.replace(target)
    # The reason is a courtesy: on a full disk it may not fit, and the segment is aside anyway.
    with contextlib.suppress(OSError):
        target.with_name(target.name + ".reason").write_text(reason + "\n", encoding="utf-8")


def _write(store: Store, loaded: Sequence[Loaded], extraction: Extraction | None = None) -> WriteCounts:
    tables: dict[str, list[pa.Table]] = {"spans": [], "logs": []}
    for item in loaded:
        tables[item.segment.signal].append(item.table)
    return write_batch(
        store,
        spans=pa.concat_tables(tables["spans"]) if tables["spans"] else None,
        logs=pa.concat_tables(tables["logs"]) if tables["logs"] else None,
        segments=[SegmentRecord(i.segment.name, i.segment.signal, i.table.num_rows) for i in loaded],
        extraction=extraction,
    )


def write_isolated(
    store: Store,
    loaded: Sequence[Loaded],
    refuse: Callable[[Segment, str], None],
    extraction: Extraction | None = None,
) -> tuple[list[Loaded], int, int]:
    """Write the group in one transaction; if the store refuses it, write each segment alone and
    `refuse` those it still refuses. Returns what was written and its new span and log rows."""
    try:
        counts = _write(store, loaded, extraction)
        return list(loaded), counts.spans, counts.logs
    except Exception as exc:
        if store_cannot_write(exc):
            raise
        if len(loaded) == 1:
            refuse(loaded[0].segment, _refused(exc))
            return [], 0, 0
    written: list[Loaded] = []
    spans = logs = 0
    for item in loaded:
        try:
            counts = _write(store, [item], extraction)
        except Exception as exc:
            if store_cannot_write(exc):
                raise  # those written so far are recorded: the next fold unlinks them
            refuse(item.segment, _refused(exc))
            continue
        written.append(item)
        spans += counts.spans
        logs += counts.logs
    return written, spans, logs


def _summary(aside: list[tuple[Segment, str]], root: Path) -> str:
    first, reason = aside[0]
    n = len(aside)
    what = "1 segment" if n == 1 else f"{n} segments"
    more = "" if n == 1 else f"; {n - 1} more, each with a .reason file"
    where = printable(root / DAMAGED)
    return f"set aside {what} in {where}, not folded ({first.name}: {reason}{more}); folded the rest"


def already_folded(store: Store, segments: Sequence[Segment]) -> set[str]:
    """The names of `segments` the store records as folded (by a process that died before it
    could unlink them)."""
    names = [s.name for s in segments]
    rows = store.fetchall("SELECT name FROM ingested_segments WHERE list_contains(?, name)", [names])
    return {r[0] for r in rows}


def fold_pending(
    store: Store,
    root: Path | None = None,
    max_rows: int = FOLD_ROWS,
    until: Callable[[], bool] | None = None,
    say: Callable[[str], None] = log.warning,
) -> FoldResult:
    """Fold every complete segment of the store's receiver into the store; idempotent. `until`,
    checked between transactions, stops early (what is left stays pending, safe on disk).
    Segments set aside are reported once, through `say`. Raises (the store's own error) when the
    store cannot write; everything not folded by then stays pending."""
    root = segment_root(store.path) if root is None else root
    segments = pending(root) if root.is_dir() else []
    if not segments:
        return FoldResult(0, 0, 0, 0)
    done = already_folded(store, segments)
    for segment in segments:  # folded by a process that died before unlinking
        if segment.name in done:
            segment.path.unlink(missing_ok=True)
    todo = [s for s in segments if s.name not in done]
    aside: list[tuple[Segment, str]] = []

    def refuse(segment: Segment, reason: str) -> None:
        _set_aside(segment, root, reason)
        aside.append((segment, reason))

    folded = spans = logs = 0
    try:
        for group in batches(todo, max_rows):
            if until is not None and until():
                break
            loaded = load(group, refuse)
            written, new_spans, new_logs = write_isolated(store, loaded, refuse) if loaded else ([], 0, 0)
            for item in written:
                item.segment.path.unlink(missing_ok=True)
            # The records only guard the window between commit and unlink; that window has passed.
            done_now = [i.segment.name for i in written]
            store.execute("DELETE FROM ingested_segments WHERE list_contains(?, name)", [done_now])
            folded += len(written)
            spans += new_spans
            logs += new_logs
    finally:
        if aside:
            say(_summary(aside, root))
    return FoldResult(folded, spans, logs, len(aside))
