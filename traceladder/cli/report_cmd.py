"""`traceladder report [RUN]`: a run's summary and per-trace evidence as text, JSON, JUnit or one
self-contained HTML page (`--compare RUN`; `--live [--since HOURS]` for traces without a run)."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from traceladder.cli.common import add_db_option, db_path, run_id_arg, terminal
from traceladder.errors import ExitCode
from traceladder.report import DEFAULT_LIVE_HOURS
from traceladder.workflows.report_formats import FORMATS

if TYPE_CHECKING:
    from traceladder.workflows.report_files import RunReport

MAX_HOURS = 24 * 366 * 10


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report",
        help="show a run's verdicts, failure classes and evidence",
        description="A run's summary and per-trace evidence. --format html writes one self-contained page "
        "(no network requests: styles, script, data and charts inline) to --out, by default "
        "reports/RUN.html next to the store, and prints html_path=PATH.",
    )
    add_db_option(p)
    p.add_argument("run", nargs="?", type=run_id_arg, metavar="RUN_ID", help="default: the latest run")
    p.add_argument(
        "--format",
        default="text",
        metavar="FORMAT",
        help=f"{', '.join(FORMATS.builtins)}, or an installed format plug-in (default: text)",
    )
    p.add_argument(
        "--output",
        "--out",
        dest="output",
        type=Path,
        metavar="FILE",
        help="write to FILE instead of stdout (html: instead of reports/RUN.html)",
    )
    p.add_argument(
        "--compare",
        type=run_id_arg,
        metavar="RUN_ID",
        help="html: the cases whose verdict flipped since RUN_ID, and the pass-rate change per dimension",
    )
    p.add_argument(
        "--live",
        action="store_true",
        help="html: the judged traces that belong to no run (live traffic), with the trend per "
        "service.version, instead of a run",
    )
    p.add_argument(
        "--since",
        type=_hours,
        metavar="HOURS",
        help=f"with --live: traces first seen in the last HOURS (default {DEFAULT_LIVE_HOURS:g})",
    )
    p.add_argument(
        "--runs",
        nargs="+",
        type=run_id_arg,
        metavar="RUN_ID",
        help="a leaderboard of these runs of one suite instead of one run's report: model, pass rate "
        "with its Wilson interval, D1-D4, agent errors, tokens and cost per case (text or json)",
    )
    p.add_argument(
        "--prices",
        type=Path,
        metavar="FILE",
        help="with --runs: USD per million tokens for models the shipped table lacks (TOML, as "
        "--judge-prices)",
    )
    p.set_defaults(handler=handle)


def _hours(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of hours") from None
    if not math.isfinite(value) or not 0 < value <= MAX_HOURS:
        raise argparse.ArgumentTypeError(f"{text!r} must be a number of hours > 0, at most {MAX_HOURS}")
    return value


def handle(args: argparse.Namespace) -> int:
    from traceladder.workflows.report import ReportAsk, make_report

    ask = ReportAsk(
        db_path(args), args.format, run_id=args.run, output=args.output, compare=args.compare,
        live=args.live, since_hours=args.since, runs=tuple(args.runs or ()), prices=args.prices,
    )  # fmt: skip
    done = make_report(ask, stdout=sys.stdout, show_text=_show_text)
    if done.path is not None:
        print(f"html_path={done.path}" if done.page else f"report_path={done.path}")
    return ExitCode.OK


def _show_text(opened: RunReport) -> None:
    """A run's summary and its first failing traces on the terminal."""
    from traceladder.report.terminal import render_text  # rich: only when printing text

    render_text(
        opened.head,
        terminal(),
        failing=opened.failing,
        failing_count=opened.failing_count,
        conversations=opened.conversation_batches(failing=True),
    )
