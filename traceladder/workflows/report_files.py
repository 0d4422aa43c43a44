"""Reports of a run: load (from stored rows, in the run's domain's terms), render, save.

Every rendering starts from a ReportV1 that validates against its published schema
(`traceladder/schemas/report-v1.schema.json`) and seed 1's summary arithmetic; one that does not
is refused with `SchemaViolation` (a bug, exit 3) before a byte is written anywhere.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from traceladder.domain.registry import is_installed, load_domain
from traceladder.files import write_text
from traceladder.instrumentation.semconv import QUIRKS
from traceladder.reporting.build import build_report, report_problems
from traceladder.schemas import require_valid
from traceladder.storage.db import Store
from traceladder.storage.readers import run_rows

FORMATS = ("text", "json", "junit")


def load_report(store: Store, run_id: str) -> dict[str, Any]:
    """The ReportV1 of a run: its dimensions in its domain's order, its worst tools limited to
    that domain's real tools (a hallucinated tool name is a failure, not a tool)."""
    rows = run_rows(store, run_id)
    name = rows.run.get("domain") or next((r["domain"] for r in rows.results if r["domain"]), None)
    dimensions: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    if name and is_installed(name):
        domain = load_domain(name)
        dimensions = tuple(domain.suite.dimensions) if domain.suite else ()
        tools = domain.tool_names
    run = dict(rows.run, evaluator_version=rows.results[0]["evaluator_version"])
    return build_report(run, rows.results, rows.rungs, rows.findings, rows.calls, dimensions=dimensions,
                        known_tools=tools, requests=rows.requests, quirks=QUIRKS,
                        judgments=rows.judgments)  # fmt: skip


def report_json(report: dict[str, Any]) -> str:
    """The report as JSON text, once it is known to be a valid ReportV1: the document checked is
    the one written (parsed back from this text), so nothing written can differ from what was
    validated. `SchemaViolation` names the first violations otherwise."""
    text = json.dumps(report, ensure_ascii=False, indent=2, default=str) + "\n"
    require_valid("ReportV1", json.loads(text), also=report_problems)
    return text


def check_report(report: dict[str, Any]) -> None:
    """`SchemaViolation` unless `report` is a valid ReportV1 — for a writer of another rendering
    (text, JUnit, HTML) to call before it writes anything."""
    report_json(report)


def render(report: dict[str, Any], fmt: str) -> str:
    text = report_json(report)  # every format renders a validated report
    if fmt == "json":
        return text
    # Each renderer loads with its format (rich, ElementTree): `gate` without --junit needs neither.
    if fmt == "junit":
        from traceladder.reporting.junit import render_junit

        return render_junit(report)
    from rich.console import Console

    from traceladder.reporting.terminal import render_text

    console = Console(record=True, width=120, file=io.StringIO())
    render_text(report, console)
    return console.export_text()


def report_path_for(db: Path, run_id: str) -> Path:
    """Where `run` keeps a run's JSON report: reports/RUN.json next to the store."""
    return db.resolve().parent / "reports" / f"{run_id}.json"


def save_json_report(report: dict[str, Any], db: Path) -> Path:
    path = report_path_for(db, str(report["run"]["run_id"]))
    write_text(path, render(report, "json"), "report")
    return path
