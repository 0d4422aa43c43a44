"""`evaluate --source/--shards/--dask`: judge spans where they already are, sharded by trace id,
in this process or on a Dask cluster (docs/scale.md). The results go into the store (--db)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from traceladder.cli.common import db_path, int_range, seconds
from traceladder.errors import ExitCode, UserError
from traceladder.evaluation.assemble import LiveOptions
from traceladder.text import printable

if TYPE_CHECKING:
    from traceladder.evaluators.ladder import Ladder


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


def uses_sources(args: argparse.Namespace) -> bool:
    return bool(args.source or args.dask or args.shards)


def evaluate_from_source(args: argparse.Namespace, live: LiveOptions, ladder: Ladder) -> int:
    from traceladder.cli.judge_options import judge_options, say_judged, simulated_runs
    from traceladder.evaluation.executors import executor_for
    from traceladder.evaluation.shards import DEFAULT_SHARDS, ShardJob, evaluate_source
    from traceladder.span_sources import open_source
    from traceladder.span_sources.store import StoreSource

    db = db_path(args)
    source = open_source(args.source) if args.source else StoreSource(db)
    if args.dask and source.name.startswith("chdb:"):
        raise UserError(
            "chdb is embedded: one process per data path, so Dask workers cannot read it; "
            "use a ClickHouse server (clickhouse://…) or export to Parquet"
        )
    shards = args.shards or source.natural_shards() or DEFAULT_SHARDS
    job = ShardJob(source, shards, args.run, args.domain, args.cases, live, ladder=ladder)
    executor = executor_for(args.dask, timeout_s=args.dask_timeout)
    try:
        # Rung 5 runs here, on the shards' survivors, with its cache and spans in --db. The default
        # judge is decided from the source's spans by `evaluate`'s own rule (decision 75).
        source.check()
        judge = judge_options(args, simulated=simulated_runs(source.run_models(args.run)))
        summary, spans = evaluate_source(db, source, executor, job, judge)
    finally:
        executor.close()
    where = f" on {args.dask}" if args.dask else ""
    print(f"traceladder: evaluate: {printable(source.name)}: {shards} shards{where}", file=sys.stderr)
    counts = " ".join(f"{v}={n}" for v, n in sorted(summary.verdicts.items()))
    print(f"evaluated={summary.units} spans={spans} runs={','.join(summary.runs) or '-'} {counts}".rstrip())
    say_judged(summary)
    return ExitCode.OK
