"""Rendering a ReportV1 as rich tables for the terminal. Data never becomes rich markup and never
reaches the terminal with its control characters (see `traceladder.text`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from traceladder.evaluate.rungs.types import VERDICTS, VerdictValue
from traceladder.report.build import dimension_label, result_name
from traceladder.report.conversations import conversations_text
from traceladder.report.documents import ReportV1
from traceladder.report.judge_text import judge_sentence
from traceladder.text import printable


def _cell(value: object) -> Text:
    """Data in a table cell: never rich markup, never raw control characters."""
    return Text(printable(value))


def _table(title: str, *columns: str, right: tuple[str, ...] = ()) -> Table:
    """A table whose cells wrap and never cut: at a narrow width a long word (a tool name, a
    failure class) folds onto the next line, where rich's default would end it with "…"."""
    table = Table(title=title)
    for name in columns:
        table.add_column(name, justify="right" if name in right else "left", overflow="fold")
    return table


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"


def render_text(
    report: ReportV1,
    console: Console,
    *,
    show_cases: int = 20,
    failing: Sequence[Mapping[str, Any]] | None = None,
    failing_count: int | None = None,
    conversations: Iterable[Sequence[Mapping[str, Any]]] | None = None,
) -> None:
    """The summary tables and the first `show_cases` failing traces (FAIL or AGENT_ERROR), then
    the conversations' counts and the first that did not pass, each as its turns. A streamed
    report passes those (`failing`, in report order), how many there are (`failing_count`) and
    its failing conversations a page at a time (`conversations`); a whole one lets them be found
    among its results and conversations."""
    run, s = report["run"], report["summary"]
    counts = s["verdict_counts"]
    console.print(
        f"[bold]traceladder[/bold] run {escape(printable(run.get('run_id')))} · "
        f"model {escape(printable(run.get('model')))} · "
        f"{s['case_count']} case runs · accuracy [bold]{_pct(s['accuracy'])}[/bold] "
        f"({counts[VerdictValue.PASS]}/{s['scored_count']} scored; SKIP and AGENT_ERROR excluded)"
    )
    shown = [v for v in VERDICTS if v in counts]
    verdicts = _table("Verdicts by dimension", "dimension", *shown, "accuracy", right=(*shown, "accuracy"))
    for d in (*s["dimensions"], "all"):
        block = s if d == "all" else s["dimensions"][d]
        if not block["case_count"]:
            continue
        verdicts.add_row(
            _cell(dimension_label(d, s.get("dimension_names"))),
            *(str(block["verdict_counts"].get(v, 0)) for v in shown),
            f"{_pct(block['accuracy'])} of {block['scored_count']}",
        )
    console.print(verdicts)
    if s["taxonomy_counts"]:
        classes = _table("Failure classes", "class", "cases", "examples", right=("cases",))
        for item in s["top_failures"]:
            classes.add_row(
                _cell(item["failure_class"]), str(item["count"]), _cell(", ".join(item["cases"][:4]))
            )
        console.print(classes)
    if s["top_worst_tools"]:
        tools = _table("Tools implicated in failures", "tool", "failing cases", right=("failing cases",))
        for worst in s["top_worst_tools"]:
            tools.add_row(_cell(worst["tool"]), str(worst["fail_cases"]))
        console.print(tools)
    counted = ("rung", "judged", "passed", "failed", "not evaluated", "settled FAIL", "settled PASS")
    ladder = _table(
        "The cost ladder: which rung settled each trace", counted[0], "name", *counted[1:], right=counted
    )
    for rung in s.get("ladder", []):
        st = rung["statuses"]
        ladder.add_row(
            str(rung["rung"]), _cell(rung["name"]), str(st.get("pass", 0) + st.get("fail", 0)),
            str(st.get("pass", 0)), str(st.get("fail", 0)), str(st.get("not_evaluated", 0)),
            str(rung["settled_fail"]), str(rung["settled_pass"]),
        )  # fmt: skip
    if s.get("ladder"):
        console.print(ladder)
    if s.get("judge"):
        console.print(escape(printable(judge_sentence(s["judge"]))))
    scores = _table("Mean rung scores", "score", "mean", right=("mean",))
    for key, value in s["mean_rung_scores"].items():
        scores.add_row(key, "—" if value is None else f"{value:.3f}")
    console.print(scores)
    if failing is None:
        failing = [
            r for r in report["results"] if r["verdict"] in (VerdictValue.FAIL, VerdictValue.AGENT_ERROR)
        ]
    bad = failing
    total = len(bad) if failing_count is None else failing_count
    if bad:
        cases = _table(f"Failing cases ({total})", "case", "verdict", "rung", "why", right=("rung",))
        for r in bad[:show_cases]:
            name = result_name(r)
            cases.add_row(
                _cell(name),
                _cell(r["taxonomy"] or r["verdict"]),
                str(r["settled_at"] or "—"),
                _cell(r["explanation"]),
            )
        console.print(cases)
        if total > show_cases:
            console.print(f"… {total - show_cases} more in the JSON report")
    if "conversations" in s:
        if conversations is None:
            conversations = [
                [
                    c
                    for c in report.get("conversations", ())
                    if c["verdict"] not in (VerdictValue.PASS, VerdictValue.SKIP)
                ]
            ]
        console.print(
            conversations_text(s["conversations"], conversations),
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
