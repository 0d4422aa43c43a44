"""The store's spans read out whole, for another place to hold them: one shard of them as Arrow
(a store read as a span source, `receive/span_sources/store.py`) or all of them copied to Hive-partitioned
Parquet (`traceladder export`, `receive/span_sources/parquet.py`, which owns the layout).

The shard is a DuckDB expression over `trace_id` (`receive.span_sources.shard.duckdb_shard`), so every
source agrees on which trace is in which shard.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb
import pyarrow as pa

from traceladder.store.db import Store
from traceladder.store.spans import SPAN_COLUMNS, SPAN_SCHEMA

# A partitioned COPY's buffers, sized per export (decision 481): see `export_parquet`.
_BUFFER_BYTES = 24 * 2**20
_ROW_GROUP_ROWS = (256, 16_384)  # at least, at most
# A span's width: its text columns and ~120 bytes of ids, times and codes, from ~1% of the
# store's vectors (sampled by vector: the whole attributes column is not decompressed for it).
_WIDTH = """
SELECT avg(strlen(attributes::VARCHAR) + strlen(events::VARCHAR) + strlen(resource::VARCHAR)
           + strlen(name) + 120)
FROM spans USING SAMPLE 1 PERCENT (system)
"""


def read_span_shard(store: Store, shard_of: str, shard: int) -> pa.Table:
    """The spans whose `shard_of` (an expression over trace_id) is `shard`, as `SPAN_SCHEMA`."""
    return (
        store.conn.sql(f"SELECT {', '.join(SPAN_COLUMNS)} FROM spans WHERE {shard_of} = {int(shard)}")
        .to_arrow_table()
        .cast(SPAN_SCHEMA)
    )


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def copy_spans_to_parquet(
    store: Store, out: Path, shard_of: str, shards: int, memory: str
) -> tuple[int, int]:
    """Copy every span to `out/date=D/shard=K/part-<uuid>.parquet` (zstd) in one streaming COPY
    under a `memory` cap on one thread, in row groups sized to the store's span width over
    `shards` partitions a day; returns (spans, traces). `date` is the UTC day the trace started, so a
    trace that crosses midnight stays in one partition."""
    cols = ", ".join(SPAN_COLUMNS)
    # The trace's day by a join with one small row per trace, not a window over the spans: a
    # window holds every span (attributes and all) in memory at once; the join streams them.
    day = "strftime(make_timestamp(min(start_ns) // 1000), '%Y-%m-%d')"
    days = f"(SELECT trace_id, {day} AS date FROM spans GROUP BY trace_id) d"
    with store.memory_limit(memory, threads=1), store.lock:
        spans = store.conn.execute("SELECT count(*), count(DISTINCT trace_id) FROM spans").fetchone()
        assert spans is not None
        if spans[0]:
            rows = _row_group_rows(store.conn, shards)
            with _handed_on_every(store.conn, rows):
                store.conn.execute(
                    f"COPY (SELECT {cols}, d.date, {shard_of} AS shard"
                    f" FROM spans JOIN {days} USING (trace_id)) TO {_quote(str(out))}"
                    " (FORMAT parquet, PARTITION_BY (date, shard), "
                    f"FILENAME_PATTERN 'part-{{uuid}}', COMPRESSION zstd, ROW_GROUP_SIZE {rows})"
                )
    return int(spans[0]), int(spans[1])


def _row_group_rows(conn: duckdb.DuckDBPyConnection, shards: int) -> int:
    """Rows per row group: a row group of every partition open at once within `_BUFFER_BYTES`
    (a partition is a day's shard; DuckDB keeps at most `partitioned_write_max_open_files`)."""
    width = conn.execute(_WIDTH).fetchall()[0][0] or 1024  # a tiny store: no vector sampled
    days = conn.execute("SELECT count(DISTINCT start_ns // 86_400_000_000_000) FROM spans").fetchall()[0][0]
    most = int(conn.execute("SELECT current_setting('partitioned_write_max_open_files')").fetchall()[0][0])
    partitions = max(1, min(most, shards * max(1, days)))
    low, high = _ROW_GROUP_ROWS
    return int(max(low, min(high, _BUFFER_BYTES // (partitions * width))))


@contextmanager
def _handed_on_every(conn: duckdb.DuckDBPyConnection, rows: int) -> Iterator[None]:
    """A partitioned COPY hands its thread's rows to the partitions every `rows` meanwhile (not
    every 524,288), then the setting is restored."""
    before = conn.execute("SELECT current_setting('partitioned_write_flush_threshold')").fetchall()[0][0]
    conn.execute(f"SET partitioned_write_flush_threshold = {int(rows)}")
    try:
        yield
    finally:
        conn.execute(f"SET partitioned_write_flush_threshold = {int(before)}")
