"""The report formats, built-in and plug-in, in one registry (`traceladder.formats` entry points).

A format renders one run's report a piece at a time (`chunks`), so no format holds a large run
in memory unless it chooses to. Built-ins: `text` (the terminal summary), `json` (ReportV1),
`junit` (one test case per trace) and `html` (one self-contained page, written to a file by
default). A plug-in registers a `ReportFormat`:

    [project.entry-points."traceladder.formats"]
    csv = "my_package.report:CSV"

and is used where `--format NAME` names it (the one opt-in rule: docs/extending.md). It imports
what it needs from `traceladder.plugin_api.formats`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from traceladder.errors import UserError
from traceladder.plugins.loader import Kind, entries, load
from traceladder.store.db import Store
from traceladder.workflows.report_files import RunReport, json_chunks, junit_chunks, open_report, text_of


@dataclass
class ReportRequest:
    """What a format renders: a run of a store, opened once on first use (`opened`: the ReportV1
    head, the first failing results, the results in batches). `compare_run` is the run a page
    compares with (`--compare`); formats that do not compare ignore it."""

    store: Store
    run_id: str
    compare_run: str | None = None
    options: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def opened(self) -> RunReport:
        return open_report(self.store, self.run_id)


@dataclass(frozen=True)
class ReportFormat:
    """A report format: its `name` (what `--format` says), a one-line `summary`, and `chunks`,
    the report as text a piece at a time. `page`: written to a file next to the store by default
    (the HTML page) rather than to standard output."""

    name: str
    summary: str
    chunks: Callable[[ReportRequest], Iterator[str]]
    page: bool = False


def _text(request: ReportRequest) -> Iterator[str]:
    yield text_of(request.opened)


def _html(request: ReportRequest) -> Iterator[str]:
    # The page renderer and its queries load only for --format html (start-up of the rest).
    from traceladder.workflows.html_pages import run_page

    yield run_page(request.store, request.run_id, compare_run=request.compare_run)


TEXT = ReportFormat("text", "the summary and the first failing traces, for a terminal", _text)
JSON = ReportFormat("json", "ReportV1, the published JSON document", lambda r: json_chunks(r.opened))
JUNIT = ReportFormat("junit", "JUnit XML, one test case per trace", lambda r: junit_chunks(r.opened))
HTML = ReportFormat("html", "one self-contained page with every verdict's evidence", _html, page=True)


def _checked(name: str, target: str, obj: object) -> ReportFormat:
    if not isinstance(obj, ReportFormat):
        raise UserError(f"format {name!r} ({target}) is not a traceladder ReportFormat")
    if obj.name != name:
        raise UserError(f"format {name!r} ({target}) calls itself {obj.name!r}; the names must match")
    return obj


FORMATS = Kind(
    name="format",
    group="traceladder.formats",
    builtins={f.name: f"{__name__}:{f.name.upper()}" for f in (TEXT, JSON, JUNIT, HTML)},
    check=_checked,
    named_by="--format NAME",
)


def report_format(name: str) -> ReportFormat:
    """The format `name`: a built-in, or an installed plug-in (one line when it is neither)."""
    found: ReportFormat = load(FORMATS, name)
    return found


def format_names() -> list[str]:
    """Every format `--format` accepts here: the built-ins, then the installed plug-ins."""
    return list(entries(FORMATS))
