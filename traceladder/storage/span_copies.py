"""The store's spans read out whole, for another place to hold them: one shard of them as Arrow
(a store read as a span source, `span_sources/store.py`) or all of them copied to Hive-partitioned
Parquet (`traceladder export`, `span_sources/parquet.py`, which owns the layout).

The shard is a DuckDB expression over `trace_id` (`span_sources.shard.duckdb_shard`), so every
source agrees on which trace is in which shard.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from traceladder.storage.db import Store
from traceladder.storage.spans import SPAN_COLUMNS, SPAN_SCHEMA


def read_span_shard(store: Store, shard_of: str, shard: int) -> pa.Table:
    """The spans whose `shard_of` (an expression over trace_id) is `shard`, as `SPAN_SCHEMA`."""
    return (
        store.conn.sql(f"SELECT {', '.join(SPAN_COLUMNS)} FROM spans WHERE {shard_of} = {int(shard)}")
        .to_arrow_table()
        .cast(SPAN_SCHEMA)
    )


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def copy_spans_to_parquet(store: Store, out: Path, shard_of: str, memory: str) -> tuple[int, int]:
    """Copy every span to `out/date=D/shard=K/part-<uuid>.parquet` (zstd) in one streaming COPY
    under a `memory` cap; returns (spans, traces). `date` is the UTC day the trace started, so a
    trace that crosses midnight stays in one partition."""
    cols = ", ".join(SPAN_COLUMNS)
    # The trace's day by a join with one small row per trace, not a window over the spans: a
    # window holds every span (attributes and all) in memory at once; the join streams them.
    day = "strftime(make_timestamp(min(start_ns) // 1000), '%Y-%m-%d')"
    days = f"(SELECT trace_id, {day} AS date FROM spans GROUP BY trace_id) d"
    with store.memory_limit(memory), store.lock:
        spans = store.conn.execute("SELECT count(*), count(DISTINCT trace_id) FROM spans").fetchone()
        assert spans is not None
        if spans[0]:
            store.conn.execute(
                f"COPY (SELECT {cols}, d.date, {shard_of} AS shard FROM spans JOIN {days} USING (trace_id)) "
                f"TO {_quote(str(out))} (FORMAT parquet, PARTITION_BY (date, shard), "
                "FILENAME_PATTERN 'part-{uuid}', COMPRESSION zstd)"
            )
    return int(spans[0]), int(spans[1])
