"""The options of `evaluate --source/--shards/--dask`: judge spans where they already are, sharded
by trace id, in this process or on a Dask cluster (docs/scale.md; the workflow:
`workflows/evaluate.py`). The results go into the store (--db)."""

from __future__ import annotations

import argparse

from traceladder.cli.common import int_range, seconds


def add_source_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--source",
        metavar="SPEC",
        help="read spans from here instead of the store; results still go to --db: parquet:DIR "
        "(`traceladder export`), duckdb:PATH, clickhouse://[user@]host[:port]/DATABASE?table=otel_traces "
        "(password from $TRACELADDER_CLICKHOUSE_PASSWORD), chdb:///abs/path?database=…&table=…",
    )
    p.add_argument(
        "--shards",
        type=int_range(1, 65_536),
        metavar="N",
        help="split the traces into N shards by trace-id hash, one task each (default: the Parquet "
        "export's shard count, else 8)",
    )
    p.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="run the shard tasks on a Dask cluster: tcp://HOST:8786, or local:N to start N worker "
        "processes on 127.0.0.1 (needs traceladder[dask])",
    )
    p.add_argument(
        "--dask-timeout",
        type=seconds(),
        default=10.0,
        metavar="SECONDS",
        help="give up connecting to the Dask scheduler after this long (default 10)",
    )
