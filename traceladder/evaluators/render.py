"""Rendering a ReportV1: rich tables for the terminal, JUnit XML for CI test tabs."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from traceladder.evaluators.report import DIMENSIONS, VERDICTS
from traceladder.text import printable, xml_text


def _cell(value: object) -> Text:
    """Data in a table cell: never rich markup, never raw control characters."""
    return Text(printable(value))


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"


def render_text(report: dict[str, Any], console: Console, *, show_cases: int = 20) -> None:
    run, s = report["run"], report["summary"]
    counts = s["verdict_counts"]
    console.print(
        f"[bold]traceladder[/bold] run {escape(printable(run.get('run_id')))} · "
        f"model {escape(printable(run.get('model')))} · "
        f"{s['case_count']} case runs · accuracy [bold]{_pct(s['accuracy'])}[/bold] "
        f"({counts['PASS']}/{s['scored_count']} scored; SKIP and AGENT_ERROR excluded)"
    )
    verdicts = Table(title="Verdicts by dimension")
    verdicts.add_column("dimension")
    for v in VERDICTS:
        verdicts.add_column(v, justify="right")
    verdicts.add_column("accuracy", justify="right")
    for d in (*DIMENSIONS, "all"):
        block = s if d == "all" else s["dimensions"][d]
        if not block["case_count"]:
            continue
        verdicts.add_row(
            d,
            *(str(block["verdict_counts"][v]) for v in VERDICTS),
            f"{_pct(block['accuracy'])} of {block['scored_count']}",
        )
    console.print(verdicts)
    if s["taxonomy_counts"]:
        classes = Table(title="Failure classes")
        classes.add_column("class")
        classes.add_column("cases", justify="right")
        classes.add_column("examples")
        for item in s["top_failures"]:
            classes.add_row(
                _cell(item["failure_class"]), str(item["count"]), _cell(", ".join(item["cases"][:4]))
            )
        console.print(classes)
    if s["top_worst_tools"]:
        tools = Table(title="Tools implicated in failures")
        tools.add_column("tool")
        tools.add_column("failing cases", justify="right")
        for item in s["top_worst_tools"]:
            tools.add_row(_cell(item["tool"]), str(item["fail_cases"]))
        console.print(tools)
    scores = Table(title="Mean rung scores")
    scores.add_column("score")
    scores.add_column("mean", justify="right")
    for key, value in s["mean_rung_scores"].items():
        scores.add_row(key, "—" if value is None else f"{value:.3f}")
    console.print(scores)
    bad = [r for r in report["results"] if r["verdict"] in ("FAIL", "AGENT_ERROR")]
    if bad:
        cases = Table(title=f"Failing cases ({len(bad)})", show_lines=False)
        cases.add_column("case")
        cases.add_column("verdict")
        cases.add_column("rung", justify="right")
        cases.add_column("why", overflow="fold")
        for r in bad[:show_cases]:
            name = r["case_id"] + (f"#{r['repeat_index']}" if r["repeat_index"] else "")
            cases.add_row(
                _cell(name),
                _cell(r["taxonomy"] or r["verdict"]),
                str(r["settled_at"] or "—"),
                _cell(r["explanation"]),
            )
        console.print(cases)
        if len(bad) > show_cases:
            console.print(f"… {len(bad) - show_cases} more in the JSON report")


def render_junit(report: dict[str, Any]) -> str:
    """One <testcase> per case run; FAIL → <failure>, AGENT_ERROR → <error>, SKIP → <skipped>.

    Every string from the run (names, messages, model output) goes through `xml_text`: a model
    that emits ESC or NUL must not make the CI artifact unparsable.
    """
    s = report["summary"]["verdict_counts"]
    suite = ET.Element(
        "testsuite",
        name=xml_text(f"traceladder {report['run'].get('run_id')}"),
        tests=str(len(report["results"])),
        failures=str(s["FAIL"]),
        errors=str(s["AGENT_ERROR"]),
        skipped=str(s["SKIP"]),
    )
    for r in report["results"]:
        name = r["case_id"] + (f"#{r['repeat_index']}" if r["repeat_index"] else "")
        case = ET.SubElement(
            suite, "testcase", classname=xml_text(f"traceladder.{r['dimension']}"), name=xml_text(name)
        )
        detail = "\n".join(f"[rung {f['rung']}] {f['code']}: {f['message']}" for f in r["findings"])
        message = xml_text(r["explanation"] or "")
        if r["verdict"] == "FAIL":
            node = ET.SubElement(case, "failure", message=message, type=xml_text(r["taxonomy"] or "FAIL"))
            node.text = xml_text(detail)
        elif r["verdict"] == "AGENT_ERROR":
            ET.SubElement(case, "error", message=message, type="AGENT_ERROR")
        elif r["verdict"] == "SKIP":
            ET.SubElement(case, "skipped", message=message)
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
