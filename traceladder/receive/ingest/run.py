"""Ingesting decoded requests into the store in bulk, and accounting for every file.

Rows are written in transactions of at most about `batch_rows` rows or `batch_bytes` of decoded
rows, whichever comes first (Arrow, set-based, idempotent — `store.writes.write_batch`), so
ingesting a file twice adds nothing and an interrupted ingest keeps every batch it committed. A bad
file or line costs only itself: it is reported on one line with its location and the rest goes on.

Bounded memory, whatever the size of the input: files are read request by request, decoded a
group (`group_bytes` of JSON) at a time, written a batch at a time, and DuckDB's share is capped
while ingesting (`INGEST_MEMORY`) — uncapped it keeps the blocks it wrote cached up to 80% of RAM,
so the process grew with the file even though every batch had been written (decision 181).
Each batch is checkpointed once it is committed: rows committed but not yet checkpointed stay in
DuckDB's memory, so a checkpoint per ingest would hold the whole input (decision 363), and a WAL
threshold let two batches pile up before each checkpoint (decision 530).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import duckdb
import pyarrow as pa

from traceladder.decode import DecodeError
from traceladder.decode.decoded import ParsedSpan
from traceladder.receive.ingest.decoding import GROUP_BYTES, Decoded
from traceladder.receive.ingest.parallel import Decoders, Item, Unit, units
from traceladder.receive.ingest.requests import ReadError, Request, expand
from traceladder.store.db import Store
from traceladder.store.writes import write_batch

_T = TypeVar("_T")

BATCH_ROWS = 50_000
# Decoded rows per transaction, however large each span is: agent spans carrying whole chat
# histories are ~4 KB, so 50,000 of them held ~200 MB of Arrow plus DuckDB's copy.
BATCH_BYTES = 64 << 20
# DuckDB's share while ingesting: enough for a batch's insert and fold, the rest evicted (128 MB since
# a batch's new spans are decided in Arrow: tests/ingest/test_ingest_memory.py measured, decision 363).
INGEST_MEMORY = "128MB"
# A batch that needs more (spans of megabytes each; DuckDB works 2,048 rows at a time) is written
# again with each of these in turn (a trace with a 50 MB argument needs ~2.2 GB; "80%" is DuckDB's
# own default): the cap bounds the cache, it must never fail an ingest.
INGEST_MEMORY_ROOMY = ("2GB", "80%")
# A request whose spans average more than this is written with the first roomy cap at once: under
# the small cap such a span can fail DuckDB fatally (the database invalidated, so no retry), not
# with a recoverable out-of-memory error.
WIDE_SPAN_BYTES = 1 << 20


@dataclass
class IngestSummary:
    files: int = 0
    requests: int = 0
    spans: int = 0  # decoded
    logs: int = 0
    new_spans: int = 0  # stored (the rest were already there)
    new_logs: int = 0
    traces: int = 0  # traces whose tool calls were derived again
    rejected: int = 0
    problems: list[str] = field(default_factory=list)


def _with_source(table: pa.Table, source: str) -> pa.Table:
    return table.append_column(
        pa.field("source", pa.string(), nullable=False), pa.array([source] * table.num_rows, pa.string())
    )


class _Buffer:
    def __init__(self, store: Store, summary: IngestSummary, batch_rows: int, batch_bytes: int) -> None:
        self.store, self.summary = store, summary
        self.batch_rows, self.batch_bytes = batch_rows, batch_bytes
        self.tables: dict[str, list[pa.Table]] = {"spans": [], "logs": []}
        # per span row, its attributes and events as decoded (None: the stage parses the text)
        self.parsed: list[ParsedSpan | None] = []
        self.rows = self.bytes = 0
        self.wide = False

    def add(self, item: Decoded, source: str) -> None:
        kind = "spans" if item.signal == "traces" else "logs"
        if item.batch.table.num_rows:
            self.tables[kind].append(_with_source(item.batch.table, source))
            if kind == "spans":
                parsed = item.batch.parsed
                self.parsed.extend([None] * item.batch.table.num_rows if parsed is None else parsed)
            self.rows += item.batch.table.num_rows
            self.bytes += item.batch.table.nbytes
            self.wide |= item.batch.table.nbytes > WIDE_SPAN_BYTES * item.batch.table.num_rows
        if self.rows >= self.batch_rows or self.bytes >= self.batch_bytes:
            self.flush()

    def flush(self) -> None:
        if not self.rows:
            return
        spans = pa.concat_tables(self.tables["spans"]) if self.tables["spans"] else None
        logs = pa.concat_tables(self.tables["logs"]) if self.tables["logs"] else None
        parsed = self.parsed if any(p is not None for p in self.parsed) else None
        counts = _roomy(
            self.store, lambda: write_batch(self.store, spans=spans, logs=logs, parsed=parsed), wide=self.wide
        )
        _roomy(self.store, lambda: self.store.execute("CHECKPOINT"), wide=self.wide)  # decision 530
        self.summary.new_spans += counts.spans
        self.summary.new_logs += counts.logs
        self.summary.traces += counts.traces
        self.tables = {"spans": [], "logs": []}
        self.parsed = []  # held only for the batch
        self.rows = self.bytes = 0
        self.wide = False


def _out_of_memory(exc: BaseException | None) -> bool:
    """Whether DuckDB running out of memory is what failed, even when a later statement's error
    replaced it (cleaning up inside the aborted transaction fails with "Current transaction is
    aborted", whose context is the real cause)."""
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, duckdb.OutOfMemoryException):
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


def _roomy(store: Store, write: Callable[[], _T], wide: bool = False) -> _T:
    """`write()` under the cap, or again with more room each time DuckDB runs out of memory
    (`INGEST_MEMORY_ROOMY`). Each retry is a new transaction: the failed one was rolled back
    (`Store.transaction`), and the write is idempotent. `wide` (spans of megabytes) starts with
    the first roomy cap."""
    for room in ((None,) if not wide else ()) + INGEST_MEMORY_ROOMY[:-1]:
        try:
            if room is None:
                return write()
            with store.memory_limit(room):
                return write()
        except duckdb.Error as exc:
            if not _out_of_memory(exc):
                raise
    with store.memory_limit(INGEST_MEMORY_ROOMY[-1]):
        return write()


def ingest(
    store: Store,
    paths: Iterable[str],
    signal: str | None = None,
    source: str = "file",
    batch_rows: int = BATCH_ROWS,
    on_problem: Callable[[str], None] | None = None,
    processes: int = 1,
    batch_bytes: int = BATCH_BYTES,
    group_bytes: int = GROUP_BYTES,
    memory: str = INGEST_MEMORY,
) -> IngestSummary:
    """Ingest every request in `paths`; problems are collected (and passed to `on_problem`), one
    line per file however many of its requests were bad. `processes` > 1 decodes in that many
    worker processes (`receive.ingest.parallel`); the rows, counts and problems are the same. Memory is
    bounded by the batch and group sizes and by DuckDB's cap `memory`, not by the input's (the
    module's docstring)."""
    summary = IngestSummary()
    buffer = _Buffer(store, summary, batch_rows, batch_bytes)
    decoders = Decoders(processes)
    files: list[str | Path] = []
    found: list[str] = []

    def take(item: Decoded | DecodeError | ReadError) -> None:
        if isinstance(item, DecodeError | ReadError):
            found.append(str(item))
            return
        n = item.batch.table.num_rows
        if item.signal == "traces":
            summary.spans += n
        else:
            summary.logs += n
        if item.batch.rejected:
            summary.rejected += len(item.batch.rejected)
            what = "spans" if item.signal == "traces" else "log records"
            found.append(f"{item.where}: {len(item.batch.rejected)} {what} rejected: {item.batch.message()}")
        buffer.add(item, source)

    def done(results: Iterator[tuple[Unit, list[Item]]]) -> None:
        for unit, items in results:
            for item in items:
                take(item)
            if unit.last:  # one line per file, however many of its requests were bad
                path = files[unit.file]
                if len(found) == 1:
                    _report(summary, found[0], on_problem)
                elif found:
                    _report(
                        summary, f"{describe(path)}: {len(found)} problems; the first: {found[0]}", on_problem
                    )
                found.clear()

    try:
        with store.memory_limit(memory):
            for path in expand(list(paths)):
                summary.files += 1
                files.append(path)
                for unit in units(path, len(files) - 1, signal, group_bytes):
                    summary.requests += sum(isinstance(r, Request) for r in unit.requests)
                    done(decoders.submit(unit))
            done(decoders.drain())
            buffer.flush()  # and checkpointed under the cap: closing the store would fold the WAL uncapped
    finally:
        decoders.close()
    return summary


def _report(summary: IngestSummary, text: str, on_problem: Callable[[str], None] | None) -> None:
    summary.problems.append(text)
    if on_problem is not None:
        on_problem(text)


def describe(path: str | Path) -> str:
    return "<stdin>" if str(path) == "-" else str(path)
