"""Reports of a run: load (from stored rows, in the run's domain's terms), render, save — at any
size (issue 36).

A run's report is opened as a `RunReport`: its run block and summary, computed in SQL
(`store.report_summary.aggregates`), plus the first failing traces the text rendering lists; the
per-trace results are read and rendered a batch at a time (`RunReport.result_batches`), so JSON and
JUnit of a 200k-trace run hold one batch, never the run. `load_report` still returns the whole
document for the callers that want it in memory (a baseline, a comparison, a small run's page).

Every rendering is of a validated ReportV1 (`traceladder/schemas/report-v1.schema.json`) and seed
1's summary arithmetic: the summary is checked before the first byte, each result as it is
rendered, and the count of results at the end. One that does not validate is refused with
`SchemaViolation` (a bug, exit 3): written to a file, nothing appears (`files.write_chunks` renames
the finished file into place); to stdout, the output stops at the refused result.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import orjson

from traceladder.files import write_chunks, write_text
from traceladder.instrumentation.semconv import QUIRKS
from traceladder.report.build import (
    CaseRunCount,
    build_report,
    report_problems,
    result_entries,
    summary_of,
    summary_problems,
)
from traceladder.report.conversations import conversation_block, conversation_entry
from traceladder.report.documents import Conversation, ReportV1, Result
from traceladder.schemas import SchemaViolation, require_valid, require_valid_part
from traceladder.store.conversation_report import BATCH_CONVERSATIONS, conversation_pages
from traceladder.store.db import Store
from traceladder.store.report_summary import aggregates
from traceladder.store.run_report import (
    BATCH_TRACES,
    Scope,
    first_domain,
    row_batches,
    run_header,
    scope_of_run,
)

if TYPE_CHECKING:
    from rich.console import Console

FORMATS = ("text", "json", "junit")
JUDGE_RUNG = "judge"  # evaluate.rungs.judge.NAME, named here so a report does not import the ladder


@dataclass(frozen=True)
class RunReport:
    """A run's report, ready to render: `head` is the ReportV1 without its results (`"results":
    []`), `failing` the first FAIL or AGENT_ERROR results in report order (summary fields only) and
    `failing_count` all of them; the results themselves come from `result_batches`."""

    store: Store
    head: ReportV1
    scope: Scope
    failing: list[dict[str, Any]]
    failing_count: int
    trace_verdicts: dict[str, int] = field(default_factory=dict)  # verdict → judged traces

    def result_batches(self, batch: int = BATCH_TRACES) -> Iterator[list[Result]]:
        """The per-trace results, `batch` traces at a time, in report order."""
        for rows in row_batches(self.store, self.scope, self.head["run"], batch):
            yield result_entries(rows, QUIRKS)

    def conversation_batches(
        self, batch: int = BATCH_CONVERSATIONS, *, failing: bool = False
    ) -> Iterator[list[Conversation]]:
        """The report's conversations (ReportV1's `conversations`), `batch` at a time, each with
        its turns' user messages; `failing`: only those that did not PASS (or SKIP)."""
        if "conversations" not in self.head["summary"]:
            return
        # The conventions (what a turn's messages are) load only for a report with conversations:
        # ~30 ms of start-up the text summary of a run without any would pay (decision 600).
        from traceladder.extract.conventions.exchanges import turn_messages
        from traceladder.store.exchanges import read_exchange_rows

        for page in conversation_pages(self.store, self.scope.rows, batch, failing=failing):
            traces = [turn["trace_id"] for shown in page for turn in shown.turns]
            messages = turn_messages(read_exchange_rows(self.store, traces))
            yield [conversation_entry(shown, messages) for shown in page]


def open_report(store: Store, run_id: str, *, failing_limit: int = 20) -> RunReport:
    """The report of `run_id`: its dimensions in its domain's order, its worst tools limited to
    that domain's real tools (a hallucinated tool name is a failure, not a tool)."""
    scope = scope_of_run(store, run_id)
    run = run_header(store, run_id)
    name = run.get("domain") or first_domain(store, run_id)
    declared, tools = _domain_terms(name) if name else ({}, ())
    names = recorded_dimension_names(run) or declared
    return report_of(store, scope, run, dimensions=names, known_tools=tools, failing_limit=failing_limit)


def _domain_terms(name: str) -> tuple[dict[str, str], tuple[str, ...]]:
    """The dimensions (id → name) and tool names of domain `name`; none when it is not installed."""
    # The registry (its dataclasses, the case model: ~6 ms of start-up) only for a run that names
    # a domain: ingested traces name none, and their report needs no domain.
    from traceladder.suite.domain.registry import is_installed, load_domain

    if not is_installed(name):
        return {}, ()
    domain = load_domain(name)
    return (dict(domain.suite.dimensions) if domain.suite else {}), domain.tool_names


def recorded_dimension_names(run: Mapping[str, Any]) -> dict[str, str]:
    """The dimension names (`D1` → title, in the suite's order) a run recorded from its suite, or
    {} for a run recorded before runs kept them (its installed domain's names are used then)."""
    names = (run.get("selection") or {}).get("dimension_names")
    if not isinstance(names, dict):
        return {}
    return {str(code): str(title) for code, title in names.items()}


def report_of(
    store: Store,
    scope: Scope,
    run: dict[str, Any],
    *,
    dimensions: Mapping[str, str] | Sequence[str] = (),
    known_tools: Sequence[str] = (),
    failing_limit: int = 20,
) -> RunReport:
    """The report of any set of judged traces (a run's, or the live page's window): `run` is its
    run block (`RUN_FIELDS`; the evaluator version is read from the results); `dimensions` the
    suite's dimensions in order, with their names when it is a mapping."""
    agg = aggregates(
        store, scope, known_tools=known_tools, judge_rung=JUDGE_RUNG, failing_limit=failing_limit
    )
    run = dict(run, evaluator_version=agg.evaluator_version)
    head = build_report(run, summary_of(agg, dimensions=dimensions), [])
    if agg.conversations:  # only a report with conversations has the block (older reports validate)
        head["summary"]["conversations"] = conversation_block(agg.conversations)
    return RunReport(store, head, scope, agg.failing, agg.failing_count, agg.trace_verdicts)


def load_report(store: Store, run_id: str) -> ReportV1:
    """The whole ReportV1 of a run in memory (for a baseline, a comparison, a page)."""
    return whole(open_report(store, run_id))


def whole(opened: RunReport) -> ReportV1:
    """An opened report with every result (and conversation) in memory."""
    results = [result for batch in opened.result_batches() for result in batch]
    document: ReportV1 = {**opened.head, "results": results}
    if "conversations" in opened.head["summary"]:
        document["conversations"] = [c for batch in opened.conversation_batches() for c in batch]
    return document


# orjson writes what `json.dumps(obj, ensure_ascii=False, indent=2, default=str)` writes (dates and
# dataclasses through `str`, as there) ~15x faster: with indent, the standard library encodes in
# Python, ~0.2 ms of a report's ~0.5 ms a result (decision 431). One encoder for the whole document
# and for its streamed parts, so the two texts stay identical.
_ORJSON_OPTIONS = (
    orjson.OPT_INDENT_2
    | orjson.OPT_NON_STR_KEYS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_DATACLASS
)


def indented_json(obj: Any) -> str:
    """`obj` as JSON text indented by two spaces, as every JSON report is written."""
    try:
        return orjson.dumps(obj, option=_ORJSON_OPTIONS, default=str).decode()
    except TypeError:
        # orjson refuses text UTF-8 cannot hold (a lone surrogate a model sent, decision 216);
        # the standard encoder writes the same document, and the file writer replaces it with U+FFFD
        return json.dumps(obj, ensure_ascii=False, indent=2, default=str)


def report_json(report: ReportV1) -> str:
    """The report as JSON text, once it is known to be a valid ReportV1: the document checked is
    the one written (parsed back from this text), so nothing written can differ from what was
    validated. `SchemaViolation` names the first violations otherwise."""
    text = indented_json(report) + "\n"
    require_valid("ReportV1", json.loads(text), also=report_problems)
    return text


def check_report(report: ReportV1) -> None:
    """`SchemaViolation` unless `report` is a valid ReportV1 — for a writer of another rendering
    (text, JUnit, HTML) to call before it writes anything."""
    report_json(report)


def check_head(head: ReportV1) -> None:
    """`SchemaViolation` unless the run block and summary of a streamed report are valid (its
    results are checked one by one as they are rendered)."""
    text = json.dumps({**head, "results": []}, ensure_ascii=False, default=str)
    require_valid("ReportV1", json.loads(text), also=summary_problems)


def checked_results(opened: RunReport) -> Iterator[tuple[Result, str]]:
    """Each result of a streamed report with its JSON text (indented as in the whole document),
    each validated as written (the parsed-back text), numbered as in the whole document; at the
    end, `SchemaViolation` unless they were exactly `case_count` case runs (`build.case_runs_in`)."""
    index = 0
    runs = CaseRunCount()  # a multi-turn case's turns are one case run (decision 460)
    for batch in opened.result_batches():
        for result in batch:
            yield result, checked_result(result, index)
            index += 1
            runs.add(result)
    expected = opened.head["summary"]["case_count"]
    if runs.count != expected:
        raise SchemaViolation(
            f"refusing to write an invalid ReportV1: summary: case_count {expected} but the results "
            f"are {runs.count} case runs"
        )


def checked_result(result: Result, index: int) -> str:
    """The JSON text of one result (indented as in the whole document), once it is known to be a
    valid ReportV1 result (the parsed-back text); `index` is its place among the results."""
    text = indented_json(result)
    require_valid_part("ReportV1", "result", json.loads(text), f"results/{index}")
    return text


def json_chunks(opened: RunReport) -> Iterator[str]:
    """The report's JSON text, a result at a time: the same text `report_json` writes for the
    whole document."""
    check_head(opened.head)
    head = indented_json({k: v for k, v in opened.head.items() if k != "results"})
    yield head[: -len("\n}")] + ',\n  "results": ['
    first = True
    for _, text in checked_results(opened):
        yield ("\n    " if first else ",\n    ") + text.replace("\n", "\n    ")
        first = False
    yield "]" if first else "\n  ]"
    if "conversations" in opened.head["summary"]:
        yield ',\n  "conversations": ['
        index = 0
        for batch in opened.conversation_batches():
            for entry in batch:
                text = indented_json(entry)
                require_valid_part("ReportV1", "conversation", json.loads(text), f"conversations/{index}")
                yield ("\n    " if not index else ",\n    ") + text.replace("\n", "\n    ")
                index += 1
        yield ("]" if not index else "\n  ]")
    yield "\n}\n"


def junit_chunks(opened: RunReport) -> Iterator[str]:
    """The report as JUnit XML, a test case at a time."""
    from traceladder.report.junit import junit_case, junit_frame

    check_head(opened.head)
    opening, closing = junit_frame(opened.head, opened.trace_verdicts)
    yield opening
    for result, _ in checked_results(opened):
        yield junit_case(result)
    yield closing


def text_of(opened: RunReport) -> str:
    """The terminal rendering as plain text (for --output): the validated summary and the first
    failing traces."""
    from traceladder.report.terminal import render_text

    check_head(opened.head)
    console = _recording_console()
    render_text(
        opened.head,
        console,
        failing=opened.failing,
        failing_count=opened.failing_count,
        conversations=opened.conversation_batches(failing=True),
    )
    return console.export_text()


def stream_report(
    opened: RunReport, fmt: str, output: Path | None, stdout: IO[str], *, what: str = "report"
) -> None:
    """Render `opened` as `fmt` (json, junit, text) into `output` (atomically; `what` names it in
    an error) or `stdout`."""
    chunks: Iterator[str] | Sequence[str]
    if fmt == "json":
        chunks = json_chunks(opened)
    elif fmt == "junit":
        chunks = junit_chunks(opened)
    else:
        chunks = (text_of(opened),)
    if output is not None:
        write_chunks(output, chunks, what)
        return
    for chunk in chunks:
        stdout.write(chunk)


def render(report: ReportV1, fmt: str) -> str:
    """A whole in-memory report rendered as `fmt` (json, junit, text), once validated."""
    text = report_json(report)  # every format renders a validated report
    if fmt == "json":
        return text
    # Each renderer loads with its format (rich, ElementTree): `gate` without --junit needs neither.
    if fmt == "junit":
        from traceladder.report.junit import render_junit

        return render_junit(report)
    from traceladder.report.terminal import render_text

    console = _recording_console()
    render_text(report, console)
    return console.export_text()


def _recording_console() -> Console:
    """The terminal rendering recorded as plain text, 120 columns, data's emoji codes as written
    (as `cli/console.py`'s console prints them)."""
    from rich.console import Console  # with the text format only: `gate` without --junit needs none

    return Console(record=True, width=120, file=io.StringIO(), emoji=False)


def report_path_for(db: Path, run_id: str) -> Path:
    """Where `run` keeps a run's JSON report: reports/RUN.json next to the store."""
    return db.resolve().parent / "reports" / f"{run_id}.json"


def save_json_report(report: ReportV1, db: Path) -> Path:
    path = report_path_for(db, str(report["run"]["run_id"]))
    write_text(path, render(report, "json"), "report")
    return path
