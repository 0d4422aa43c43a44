"""`traceladder report [RUN]`: a run's summary and per-trace evidence as text, JSON, JUnit or one
self-contained HTML page (`--compare RUN`; `--live [--since HOURS]` for traces without a run)."""

from __future__ import annotations

import argparse
import json
import math
import sys
from contextlib import nullcontext
from datetime import UTC, datetime
from pathlib import Path

from traceladder.cli.common import add_db_option, db_path, run_id_arg, terminal
from traceladder.errors import ExitCode, UserError
from traceladder.files import write_chunks, write_text
from traceladder.report import DEFAULT_LIVE_HOURS
from traceladder.store.db import Store, open_store
from traceladder.store.readers import latest_run
from traceladder.store.run_report import REPORT_MEMORY
from traceladder.workflows.report_formats import (
    FORMATS,
    HTML,
    JSON,
    TEXT,
    ReportFormat,
    ReportRequest,
    report_format,
)

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


def _check(args: argparse.Namespace, fmt: ReportFormat) -> None:
    """Flags that mean nothing together are a mistake, said before the store is opened."""
    if fmt is not HTML:
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
        if fmt not in (TEXT, JSON):
            raise UserError("--runs prints a leaderboard as text or json; use --format text or json")
    elif args.prices:
        raise UserError("--prices applies to --runs only")


def handle(args: argparse.Namespace) -> int:
    fmt = report_format(args.format)
    _check(args, fmt)
    if args.runs:
        return _leaderboard(args)
    if args.live:
        return _live_page(args)
    db = db_path(args)
    with open_store(db, read_only=True) as store:
        path = _run_report(args, fmt, store, db)
    if path is not None:
        print(f"html_path={path}" if fmt.page else f"report_path={path}")
    return ExitCode.OK


def _run_report(args: argparse.Namespace, fmt: ReportFormat, store: Store, db: Path) -> Path | None:
    """Render the run's report as `fmt`: to the terminal, standard output or a file (its path)."""
    # The summary in SQL, the results a batch at a time, DuckDB's cache capped: memory does not
    # grow with the run. (A page reads its evidence by its own queries, uncapped.)
    with nullcontext() if fmt.page else store.memory_limit(REPORT_MEMORY, threads=1):
        request = ReportRequest(store, args.run or latest_run(store), compare_run=args.compare)
        if fmt is TEXT and not args.output:
            from traceladder.report.terminal import render_text  # rich: only when printing text

            opened = request.opened
            render_text(
                opened.head,
                terminal(),
                failing=opened.failing,
                failing_count=opened.failing_count,
                conversations=opened.conversation_batches(failing=True),
            )
            return None
        path = args.output or (_page_path(db, request.run_id) if fmt.page else None)
        if path is None:
            for chunk in fmt.chunks(request):
                sys.stdout.write(chunk)
        else:
            write_chunks(path, fmt.chunks(request), "HTML report" if fmt is HTML else "report")
        return path


def _page_path(db: Path, name: str) -> Path:
    from traceladder.workflows.html_pages import html_path_for  # the page renderer: pages only

    return html_path_for(db, name)


def _live_page(args: argparse.Namespace) -> int:
    from traceladder.report.trend import open_trend_store
    from traceladder.workflows.html_pages import live_page

    now = datetime.now(UTC)
    with open_trend_store(db_path(args)) as store:
        page = live_page(store, hours=args.since or DEFAULT_LIVE_HOURS, now=now)
    path = args.output or _page_path(db_path(args), f"live-{now:%Y%m%dT%H%M%S}")
    write_text(path, page, "HTML report")
    print(f"html_path={path}")
    return ExitCode.OK


def _leaderboard(args: argparse.Namespace) -> int:
    from traceladder.report.leaderboard import render_leaderboard
    from traceladder.workflows.leaderboard import leaderboard_of

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
