"""Span sources: where spans already are — a traceladder store, Hive-partitioned Parquet, the
Collector's ClickHouse `otel_traces` — read one shard of traces at a time (see `base`)."""

from __future__ import annotations

from pathlib import Path

from traceladder.errors import UserError
from traceladder.receive.span_sources.base import SpanSource
from traceladder.receive.span_sources.parquet import ParquetSource

SCHEMES = ("parquet:DIR", "duckdb:PATH", "clickhouse://[user@]host[:port]/database?table=otel_traces",
           "chdb:///abs/path?database=…&table=…")  # fmt: skip


def open_source(spec: str) -> SpanSource:
    """`--source` text → a source (not yet checked: call `check()`)."""
    scheme, sep, rest = spec.partition(":")
    if sep and scheme in ("parquet", "duckdb"):
        if not rest:
            raise UserError(
                f"--source {scheme}: needs a path, e.g. {scheme}:{'DIR' if scheme == 'parquet' else 'PATH'}"
            )
        if scheme == "parquet":
            return ParquetSource(Path(rest))
        from traceladder.receive.span_sources.store import StoreSource

        return StoreSource(Path(rest))
    if sep and scheme in ("clickhouse", "chdb"):
        from traceladder.receive.span_sources.clickhouse import parse_clickhouse

        return parse_clickhouse(spec)
    shown = scheme if sep else spec
    raise UserError(f"unknown --source {shown!r}; use one of: {', '.join(SCHEMES)}")


__all__ = ["SCHEMES", "SpanSource", "open_source"]
