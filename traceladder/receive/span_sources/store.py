"""A traceladder DuckDB store as a span source: its `spans` table, one shard at a time.

Opened read-only in the process that reads, so several workers on one machine (or on a shared
filesystem) read the same file at once; DuckDB allows that while no process holds it for writing.
Only spans are read — like every other source — so a suite run's bookkeeping (`case_runs`) is
not consulted: a case's outcome comes from its invoke_agent span, which records it too.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from traceladder.receive.span_sources.shard import duckdb_shard
from traceladder.store.db import Store
from traceladder.store.readers import read_run_models
from traceladder.store.span_copies import read_span_shard


@dataclass(frozen=True)
class StoreSource:
    path: Path

    @property
    def name(self) -> str:
        return f"duckdb:{self.path}"

    def check(self) -> None:
        Store(self.path, read_only=True).close()  # a one-line StoreError when it is not a store

    def natural_shards(self) -> int | None:
        return None

    def run_models(self, run_id: str | None) -> list[tuple[str, str | None]]:
        with Store(self.path, read_only=True) as store:
            return read_run_models(store, run_id)

    def read_shard(self, shard: int, shards: int) -> pa.Table:
        with Store(self.path, read_only=True) as store:
            return read_span_shard(store, duckdb_shard("trace_id", shards), shard)
