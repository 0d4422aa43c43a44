"""`traceladder reindex`: rebuild the store's derived rows (calls, definitions, span roles) from
its stored spans with today's extraction."""

from __future__ import annotations

import argparse

from traceladder.cli.common import add_db_option, db_path
from traceladder.errors import ExitCode
from traceladder.workflows.reindex import reindex


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "reindex",
        help="rebuild tool calls and definitions from the stored spans with today's extraction",
        description="Rebuild every derived row (tool_calls, tool_definitions, the spans' derived columns, "
        "the trace index) of the traces whose rows an older extraction or other conventions derived, from "
        "the stored spans. Bounded in memory, resumable (run it again after an interruption), safe while "
        "`serve` writes to the same store.",
    )
    add_db_option(p)
    p.add_argument(
        "--where",
        metavar="SQL",
        help="only traces matching this condition over the traces table, e.g. \"service = 'checkout'\"",
    )
    p.add_argument(
        "--conventions",
        metavar="NAMES",
        help="first set the store's convention plug-ins (comma-separated entry-point names; '' for the "
        "built-ins alone): every trace is then rebuilt with them",
    )
    p.add_argument(
        "--all", action="store_true", help="rebuild matching traces even if their rows are current"
    )
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    summary = reindex(db_path(args), where=args.where, conventions=args.conventions, force=args.all)
    plugins = summary.conventions or "none"
    print(f"reindexed traces={summary.traces} batches={summary.batches} plugins={plugins}")
    return ExitCode.OK
