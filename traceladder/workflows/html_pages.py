"""The HTML report: a run's page (optionally compared with another run), or the page of the live
traces of a time window with the trend per deploy. Reads what the page needs, renders it once.

Reports are loaded as `report --format json` loads them (`workflows.report_files.load_report`), so the
page and the JSON can never disagree; the page only adds each shown trace's spans, tool results
and final answer (`store.trace_detail`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from itertools import islice
from pathlib import Path
from typing import Any

from traceladder.errors import UserError
from traceladder.extract.conventions.exchanges import exchange_details
from traceladder.report import DEFAULT_LIVE_HOURS
from traceladder.report.build import CaseRunCount
from traceladder.report.comparison import compare_sides
from traceladder.report.documents import ComparisonV1, ReportV1
from traceladder.report.html import CASE_LIMIT, LiveContext, render_html
from traceladder.report.html_conversations import CONVERSATION_LIMIT
from traceladder.report.html_data import compare
from traceladder.report.html_digest import PageDigest
from traceladder.report.trend import Trend, label, trend
from traceladder.schemas import SchemaViolation
from traceladder.store.db import Store
from traceladder.store.exchanges import read_exchange_rows
from traceladder.store.run_report import scope_of_traces
from traceladder.store.runs import run_info
from traceladder.store.suite_runs import suite_runs
from traceladder.store.trace_detail import live_window, trace_details
from traceladder.workflows.compare_runs import NotComparable, check_same_suite
from traceladder.workflows.report_files import (
    RunReport,
    check_head,
    check_report,
    checked_result,
    load_report,
    open_report,
    report_of,
)


def html_path_for(db: Path, name: str) -> Path:
    """Where the page goes by default: reports/NAME.html next to the store (beside the JSON)."""
    return db.resolve().parent / "reports" / f"{name}.html"


def _stamp(now: datetime) -> str:
    return now.strftime("%Y-%m-%d %H:%M:%S UTC")


def _details(store: Store, shown: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    ids = [c["trace_id"] for c in shown]
    found = trace_details(store, ids, said=exchange_details(read_exchange_rows(store, ids, calls=True)))
    return {trace_id: asdict(detail) for trace_id, detail in found.items()}


def _streamed(opened: RunReport) -> tuple[ReportV1, PageDigest]:
    """The page's report — the run block and summary, and only the results the page shows, each
    validated — and its digest of every result, read a batch at a time (issue 36): a page of any
    run holds at most twice `CASE_LIMIT` results."""
    check_head(opened.head)
    digest = PageDigest.of(opened.head, CASE_LIMIT)
    runs = CaseRunCount()
    for batch in opened.result_batches():
        digest.add_all(batch)
        for each in batch:
            runs.add(each)
    if runs.count != opened.head["summary"]["case_count"]:
        raise SchemaViolation(
            f"refusing to write an invalid ReportV1: summary: case_count "
            f"{opened.head['summary']['case_count']} but the results are {runs.count} case runs"
        )
    shown, _ = digest.shown()
    for index, result in enumerate(shown):
        checked_result(result, index)
    page: ReportV1 = {**opened.head, "results": shown}
    if "conversations" in opened.head["summary"]:  # the first the page shows, a page at a time
        found = (c for batch in opened.conversation_batches() for c in batch)
        page["conversations"] = list(islice(found, CONVERSATION_LIMIT))
    return page, digest


def run_page(
    store: Store, run_id: str, *, compare_run: str | None = None, now: datetime | None = None
) -> str:
    """The page of one run, with the trend across the runs of its suite (the runs whose case file
    has the same SHA-256); with `compare_run`, the verdicts that flipped since that run and the
    pass-rate difference per dimension."""
    if compare_run == run_id:
        raise UserError(
            f"--compare names the run being reported ({run_id}); name another run to compare with"
        )
    comparison = paired = digest = None
    if compare_run:  # the flips are found across every result of both runs: both in memory
        report = load_report(store, run_id)
        check_report(report)  # the page renders a valid ReportV1 or nothing
        other = load_report(store, compare_run)
        comparison = compare(report, other)
        paired = paired_comparison(store, compare_run, run_id, other, report)
        digest = PageDigest.of(report, CASE_LIMIT).add_all(report["results"])
    else:
        report, digest = _streamed(open_report(store, run_id))
    hashes = report["run"]["input_hashes"]
    cases_hash = hashes["cases"] if hashes else None
    suite = asdict(suite_runs(store, cases_hash)) if cases_hash else None
    when = _stamp(now or datetime.now(UTC))
    details = _details(store, digest.shown()[0])
    return render_html(
        report, details, generated_at=when, comparison=comparison, paired=paired, suite=suite, digest=digest
    )


def paired_comparison(
    store: Store, a: str, b: str, report_a: ReportV1, report_b: ReportV1
) -> ComparisonV1 | None:
    """The ComparisonV1 `traceladder compare A B` prints, for the page — or None when the two runs
    are not runs of one suite (the flips above still show; a paired test would be meaningless)."""
    try:
        check_same_suite([run_info(store, a), run_info(store, b)])
    except NotComparable:
        return None
    dimensions = report_b["summary"]["dimensions"].keys()
    return compare_sides([report_a], [report_b], dimensions=list(dimensions))


def live_page(store: Store, *, hours: float = DEFAULT_LIVE_HOURS, now: datetime | None = None) -> str:
    """The page of every judged trace without a run first seen in the last `hours`, with the trend
    per `service.version` over the whole store (`report.trend`, as `traceladder trend` shows it)."""
    now = now or datetime.now(UTC)
    since = (now - timedelta(hours=hours)).replace(tzinfo=None)  # `traces.first_seen` is naive UTC
    window = live_window(store, since)
    if not window.trace_ids:
        raise UserError(
            f"no judged trace without a run was first seen in the last {hours:g} h in {store.path}; "
            "judge live traces with `traceladder watch` or `traceladder evaluate`, or widen --since"
        )
    # Not a run: the window names itself, so the report block is still a valid ReportV1's.
    run = {"run_id": f"live-since-{since:%Y%m%dT%H%M%S}", "model": None, "status": "live",
           "started_at": since.isoformat()}  # fmt: skip
    report, digest = _streamed(report_of(store, scope_of_traces(store, window.trace_ids), run))
    context = LiveContext(
        since=since.strftime("%Y-%m-%d %H:%M"),
        hours=hours,
        services=window.services,
        models=window.models,
        trend=_trend_rows(trend(store, by="version")) if "trend_by_version" in store.tables() else [],
    )
    details = _details(store, report["results"])
    return render_html(report, details, generated_at=_stamp(now), live=context, digest=digest)


def _trend_rows(result: Trend) -> list[dict[str, Any]]:
    """The `trend_by_version` rows, labelled, each with what its comparison with the deploy
    before it found."""
    said: dict[Any, str] = {}
    flagged = {c.current.key for c in result.drops}
    for c in result.comparisons:
        before = label(c.previous, "version")
        if c.flagged:
            grew = "; ".join(g.describe() for g in c.grew)
            said[c.current.key] = f"▼ drop from {before} (p = {c.p:.3g})" + (f": {grew}" if grew else "")
        elif c.p is not None:
            said[c.current.key] = f"no significant drop from {before} (p = {c.p:.3g})"
        else:
            said[c.current.key] = f"not tested against {before}: fewer than {result.min_traces} scored traces"
    out = []
    for b in result.buckets:
        where = " · ".join(str(p) for p in (b.row["service"], b.row["environment"]) if p)
        out.append(
            {
                **b.row,
                "label": f"{where or '(no service)'} · {label(b, 'version')}",
                "drop": said.get(b.key, ""),
                "flagged": b.key in flagged,
            }
        )
    return out
