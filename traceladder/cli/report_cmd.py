"""`traceladder report [RUN]`: a run's summary and per-trace evidence as text, JSON or JUnit."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from traceladder.cli.common import add_db_option, db_path, run_id_arg, terminal
from traceladder.files import write_text
from traceladder.reporting.terminal import render_text
from traceladder.storage.db import open_store
from traceladder.storage.readers import latest_run
from traceladder.workflows.reports import FORMATS, load_report, render


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="show a run's verdicts, failure classes and evidence")
    add_db_option(p)
    p.add_argument("run", nargs="?", type=run_id_arg, metavar="RUN_ID", help="default: the latest run")
    p.add_argument("--format", choices=FORMATS, default="text")
    p.add_argument("--output", type=Path, metavar="FILE", help="write to FILE instead of stdout")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    with open_store(db_path(args), read_only=True) as store:
        report = load_report(store, args.run or latest_run(store))
    if args.output:
        write_text(args.output, render(report, args.format), "report")
        print(f"report_path={args.output}")
    elif args.format == "text":
        render_text(report, terminal())
    else:
        sys.stdout.write(render(report, args.format))
    return 0
