"""`traceladder report [RUN]`: a run's summary and per-trace evidence as text, JSON, JUnit or one
self-contained HTML page (`--compare RUN`; `--live [--since HOURS]` for traces without a run)."""

from __future__ import annotations

import argparse
import json
import math
import sys
from datetime import UTC, datetime
from pathlib import Path

from traceladder.cli.common import add_db_option, db_path, run_id_arg, terminal
from traceladder.errors import ExitCode, UserError
from traceladder.files import write_text
from traceladder.live import DEFAULT_LIVE_HOURS
from traceladder.storage.db import open_store
from traceladder.storage.readers import latest_run
from traceladder.workflows.report_files import FORMATS, open_report, stream_report

MAX_HOURS = 24 * 366 * 10
REPORT_MEMORY = "64MB"  # DuckDB's share while a report is read (decision 241)


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
    p.add_argument("--format", choices=(*FORMATS, "html"), default="text")
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


def _check(args: argparse.Namespace) -> None:
    """Flags that mean nothing together are a mistake, said before the store is opened."""
    if args.format != "html":
        for flag, given in (("--compare", args.compare), ("--live", args.live), ("--since", args.since)):
            if given:
                raise UserError(f"{flag} needs --format html")
    if args.live and (args.run or args.compare):
        raise UserError("--live reports the traces that belong to no run; drop RUN_ID and --compare")
    if args.since is not None and not args.live:
        raise UserError("--since applies to --live only")
    if args.runs:
        if args.run or args.compare or args.live:
            raise UserError("--runs is a leaderboard of the runs it names; drop RUN_ID, --compare and --live")
        if args.format not in ("text", "json"):
            raise UserError("--runs prints a leaderboard as text or json; use --format text or json")
    elif args.prices:
        raise UserError("--prices applies to --runs only")


def handle(args: argparse.Namespace) -> int:
    _check(args)
    if args.runs:
        return _leaderboard(args)
    if args.format == "html":
        return _html(args)
    with open_store(db_path(args), read_only=True) as store, store.memory_limit(REPORT_MEMORY, threads=1):
        # The summary in SQL, the results a batch at a time, DuckDB's cache capped: memory does not
        # grow with the run.
        opened = open_report(store, args.run or latest_run(store))
        if args.format == "text" and not args.output:
            from traceladder.reporting.terminal import render_text  # rich: only when printing text

            render_text(opened.head, terminal(), failing=opened.failing, failing_count=opened.failing_count)
        else:
            stream_report(opened, args.format, args.output, sys.stdout)
    if args.output:
        print(f"report_path={args.output}")
    return ExitCode.OK


def _html(args: argparse.Namespace) -> int:
    # The page renderer and the trend queries load only for --format html (start-up of the rest).
    from traceladder.live.trend import open_trend_store
    from traceladder.workflows.html_pages import html_path_for, live_page, run_page

    db = db_path(args)
    if args.live:
        now = datetime.now(UTC)
        with open_trend_store(db) as store:
            page = live_page(store, hours=args.since or DEFAULT_LIVE_HOURS, now=now)
        name = f"live-{now:%Y%m%dT%H%M%S}"
    else:
        with open_store(db, read_only=True) as store:
            name = args.run or latest_run(store)
            page = run_page(store, name, compare_run=args.compare)
    path = args.output or html_path_for(db, name)
    write_text(path, page, "HTML report")
    print(f"html_path={path}")
    return ExitCode.OK


def _leaderboard(args: argparse.Namespace) -> int:
    from traceladder.reporting.leaderboard import render_leaderboard
    from traceladder.workflows.compare_runs import leaderboard_of

    with open_store(db_path(args), read_only=True) as store:
        board = leaderboard_of(store, list(args.runs), prices=args.prices)
    text = json.dumps(board, indent=2, ensure_ascii=False) + "\n" if args.format == "json" else ""
    text = text or render_leaderboard(board)
    if args.output:
        write_text(args.output, text, "leaderboard")
        print(f"report_path={args.output}")
    else:
        sys.stdout.write(text)
    return ExitCode.OK
