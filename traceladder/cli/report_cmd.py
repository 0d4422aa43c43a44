"""`traceladder report [RUN]`: the run's summary and per-case evidence as text, JSON or JUnit."""

from __future__ import annotations

import argparse
import io
import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from traceladder.cli.common import add_db_option, db_path, run_id_arg, terminal
from traceladder.domain.retail import load_retail_domain
from traceladder.evaluators.render import render_junit, render_text
from traceladder.files import write_text
from traceladder.storage.db import Store
from traceladder.storage.reports import latest_run, load_report


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="show a run's verdicts, failure classes and evidence")
    add_db_option(p)
    p.add_argument(
        "run", nargs="?", type=run_id_arg, metavar="RUN_ID", help="run to report (default: the latest)"
    )
    p.add_argument("--format", choices=("text", "json", "junit"), default="text")
    p.add_argument("--output", type=Path, metavar="FILE", help="write to FILE instead of stdout")
    p.set_defaults(handler=handle)


def render(report: dict[str, Any], fmt: str) -> str:
    if fmt == "json":
        return json.dumps(report, ensure_ascii=False, indent=2, default=str) + "\n"
    if fmt == "junit":
        return render_junit(report)
    console = Console(record=True, width=120, file=io.StringIO())
    render_text(report, console)
    return console.export_text()


def handle(args: argparse.Namespace) -> int:
    with Store(db_path(args), read_only=True) as store:
        run_id = args.run or latest_run(store)
        report = load_report(store, run_id, load_retail_domain().tool_names)
    if args.output:
        write_text(args.output, render(report, args.format), "report")
        print(f"report_path={args.output}")
    elif args.format == "text":
        render_text(report, terminal())
    else:
        sys.stdout.write(render(report, args.format))
    return 0


def report_path_for(db: Path, run_id: str) -> Path:
    return db.resolve().parent / "reports" / f"{run_id}.json"


def evaluate_and_report(store: Store, run_id: str, cases: Path | None, db: Path) -> Path:
    """What `traceladder run` does at the end: judge the run, print the report, save the JSON."""
    from traceladder.cli.evaluate_cmd import evaluate

    evaluate(store, run_id, cases)
    report = load_report(store, run_id, load_retail_domain().tool_names)
    render_text(report, terminal())
    path = report_path_for(db, run_id)
    write_text(path, render(report, "json"), "report")
    return path
