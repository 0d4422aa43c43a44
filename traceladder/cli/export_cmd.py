"""`traceladder export`: the store's spans as Hive-partitioned Parquet (date=…/shard=…)."""

from __future__ import annotations

import argparse
from pathlib import Path

from traceladder.cli.common import add_db_option, db_path, int_range
from traceladder.errors import ExitCode
from traceladder.receive.span_sources.parquet import export_parquet
from traceladder.store.db import open_store


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "export",
        help="write the store's spans as Hive-partitioned Parquet (evaluate --source parquet:DIR reads it)",
        description="Write every span of the store under DIR as date=YYYY-MM-DD/shard=K/part-*.parquet "
        "(date: the UTC day the trace started; shard: the trace id's low 64 bits mod N), the interchange "
        "format for object storage and for sharded evaluation (docs/scale.md).",
    )
    add_db_option(p)
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="a new (or empty) directory")
    p.add_argument(
        "--shards", type=int_range(1, 65_536), default=16, metavar="N", help="shard partitions (default 16)"
    )
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    with open_store(db_path(args), read_only=True) as store:
        manifest = export_parquet(store, args.out, args.shards)
    print(
        f"exported spans={manifest['spans']} traces={manifest['traces']} shards={args.shards} out={args.out}"
    )
    return ExitCode.OK
