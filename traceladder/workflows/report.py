"""The `report` workflow: one run's report in any format, the live page, or a leaderboard of runs.

`make_report(ReportAsk, stdout=…, show_text=…)` → `ReportDone`. Three documents stand behind the
one command, chosen by the request: `runs` asks for a leaderboard (text or JSON), `live` for the
HTML page of the traces that belong to no run, and otherwise one run's report (the latest when
none is named) in the format asked — streamed to `stdout` or written to a file, or, for text to
a terminal, handed to `show_text` (the command line's renderer). Flags that mean nothing together
are refused before the store is opened.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from traceladder.errors import UserError
from traceladder.files import write_chunks, write_text
from traceladder.report import DEFAULT_LIVE_HOURS
from traceladder.store.db import Store, open_store
from traceladder.store.readers import latest_run
from traceladder.store.run_report import REPORT_MEMORY
from traceladder.workflows.report_files import RunReport, check_head
from traceladder.workflows.report_formats import HTML, JSON, TEXT, ReportFormat, ReportRequest, report_format

# The terminal's rendering of a run's report (rich, at the command line's edge).
ShowText = Callable[[RunReport], None]


@dataclass(frozen=True)
class ReportAsk:
    """What `report` is asked: the store, the format's name, and one of a run (`run_id`, default
    the latest; `compare`: the run an HTML page compares with), the live page (`live`, traces first
    seen in the last `since_hours`), or a leaderboard of `runs` (`prices`: USD per million tokens
    the shipped table lacks). `output`: the file to write instead of standard output (an HTML
    page's default is reports/NAME.html next to the store)."""

    db: Path
    format: str = "text"
    run_id: str | None = None
    output: Path | None = None
    compare: str | None = None
    live: bool = False
    since_hours: float | None = None
    runs: tuple[str, ...] = ()
    prices: Path | None = None


@dataclass(frozen=True)
class ReportDone:
    """Where the report went: `path`, the file written (None when it was printed); `page`: an
    HTML page (the command prints html_path=), else a report file (report_path=)."""

    path: Path | None
    page: bool = False


def make_report(
    ask: ReportAsk, *, stdout: TextIO, show_text: ShowText, now: datetime | None = None
) -> ReportDone:
    """Make the report `ask` names. `UserError` for flags that mean nothing together (before the
    store is opened), an unknown format, run or store."""
    fmt = report_format(ask.format)
    _check(ask, fmt)
    if ask.runs:
        return _leaderboard(ask, stdout)
    if ask.live:
        return _live_page(ask, now or datetime.now(UTC))
    with open_store(ask.db, read_only=True) as store:
        return _run_report(store, ask, fmt, stdout, show_text)


def _run_report(
    store: Store, ask: ReportAsk, fmt: ReportFormat, stdout: TextIO, show_text: ShowText
) -> ReportDone:
    # The summary in SQL, the results a batch at a time, DuckDB's cache capped: memory does not
    # grow with the run. (A page reads its evidence by its own queries, uncapped.) The store is
    # closed once the report is written: its cap is never restored.
    if not fmt.page:
        store.keep_memory_limit(REPORT_MEMORY, threads=1)
    request = ReportRequest(store, ask.run_id or latest_run(store), compare_run=ask.compare)
    if fmt is TEXT and not ask.output:
        check_head(request.opened.head)  # the summary shown is the one a written report holds
        show_text(request.opened)
        return ReportDone(None)
    path = ask.output or (_page_path(ask.db, request.run_id) if fmt.page else None)
    if path is None:
        for chunk in fmt.chunks(request):
            stdout.write(chunk)
    else:
        write_chunks(path, fmt.chunks(request), "HTML report" if fmt is HTML else "report")
    return ReportDone(path, page=fmt.page)


def _check(ask: ReportAsk, fmt: ReportFormat) -> None:
    """Flags that mean nothing together are a mistake, said before the store is opened."""
    if fmt is not HTML:
        for flag, given in (("--compare", ask.compare), ("--live", ask.live), ("--since", ask.since_hours)):
            if given:
                raise UserError(f"{flag} needs --format html")
    if ask.live and (ask.run_id or ask.compare):
        raise UserError("--live reports the traces that belong to no run; drop RUN_ID and --compare")
    if ask.since_hours is not None and not ask.live:
        raise UserError("--since applies to --live only")
    if ask.runs:
        if ask.run_id or ask.compare or ask.live:
            raise UserError("--runs is a leaderboard of the runs it names; drop RUN_ID, --compare and --live")
        if fmt not in (TEXT, JSON):
            raise UserError("--runs prints a leaderboard as text or json; use --format text or json")
    elif ask.prices:
        raise UserError("--prices applies to --runs only")


def _page_path(db: Path, name: str) -> Path:
    from traceladder.workflows.html_pages import html_path_for  # the page renderer: pages only

    return html_path_for(db, name)


def _live_page(ask: ReportAsk, now: datetime) -> ReportDone:
    from traceladder.report.trend import open_trend_store  # the trend views: the live page only
    from traceladder.workflows.html_pages import live_page

    with open_trend_store(ask.db) as store:
        page = live_page(store, hours=ask.since_hours or DEFAULT_LIVE_HOURS, now=now)
    path = ask.output or _page_path(ask.db, f"live-{now:%Y%m%dT%H%M%S}")
    write_text(path, page, "HTML report")
    return ReportDone(path, page=True)


def _leaderboard(ask: ReportAsk, stdout: TextIO) -> ReportDone:
    from traceladder.report.leaderboard import render_leaderboard  # prices, Wilson: --runs only
    from traceladder.workflows.leaderboard import leaderboard_of

    with open_store(ask.db, read_only=True) as store:
        board = leaderboard_of(store, list(ask.runs), prices=ask.prices)
    text = json.dumps(board, indent=2, ensure_ascii=False) + "\n" if ask.format == "json" else ""
    text = text or render_leaderboard(board)
    if ask.output is None:
        stdout.write(text)
        return ReportDone(None)
    write_text(ask.output, text, "leaderboard")
    return ReportDone(ask.output)
