"""Rendering a ReportV1 as JUnit XML for CI test tabs: one <testcase> per judged trace.

The document is a frame (`junit_frame`: the suite's totals) around one `junit_case` per result, so
a large report is written a test case at a time (`workflows.report_files.junit_chunks`) and a
small one whole (`render_junit`) — the same text either way.

Every string from the run (names, messages, model output) goes through `xml_text`: a model that
emits ESC or NUL must not make the CI artifact unparsable.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Mapping

from traceladder.evaluate.rungs.types import UNRATED, VERDICTS, VerdictValue
from traceladder.report.build import result_name
from traceladder.report.documents import ReportV1, Result
from traceladder.text import xml_text

_DECLARATION = "<?xml version='1.0' encoding='utf-8'?>\n"


def junit_frame(report: ReportV1, trace_verdicts: Mapping[str, int] | None = None) -> tuple[str, str]:
    """The text before the first test case and after the last: the suite's name and its totals
    of test cases, i.e. of judged traces (`trace_verdicts`: verdict → traces, known before any
    result is read; counted from a whole report's results when not given). A multi-turn case's
    turns are each a test case, as they are each a result (the summary counts the case once)."""
    if trace_verdicts is None:
        trace_verdicts = Counter(r["verdict"] for r in report["results"])
    s = {v: trace_verdicts.get(v, 0) for v in VERDICTS}
    suite = ET.Element(
        "testsuite",
        name=xml_text(f"traceladder {report['run'].get('run_id')}"),
        tests=str(sum(s.values())),
        failures=str(s[VerdictValue.FAIL]),
        errors=str(s[VerdictValue.AGENT_ERROR]),
        skipped=str(sum(s.get(v, 0) for v in UNRATED)),
    )
    suite.text = "\n"  # an element with text serialises as <testsuite ...>\n</testsuite>: keep the start tag
    opening = ET.tostring(suite, encoding="unicode")[: -len("\n</testsuite>")]
    return f"{_DECLARATION}<testsuites>\n  {opening}", "\n  </testsuite>\n</testsuites>\n"


def junit_case(r: Result) -> str:
    """One result as a <testcase>, indented as in the whole document (with its leading newline).
    FAIL → <failure>, AGENT_ERROR → <error>, SKIP and NOT_EVALUATED → <skipped>."""
    # the full trace id: a JUnit test name is the identifier CI tools keep a test's history by
    name = result_name(r, trace_chars=None)
    case = ET.Element("testcase", classname=xml_text(f"traceladder.{r['dimension']}"), name=xml_text(name))
    detail = "\n".join(f"[rung {f['rung']}] {f['code']}: {f['message']}" for f in r["findings"])
    message = xml_text(r["explanation"] or "")
    if r["verdict"] == VerdictValue.FAIL:
        node = ET.SubElement(
            case, "failure", message=message, type=xml_text(r["taxonomy"] or VerdictValue.FAIL)
        )
        node.text = xml_text(detail)
    elif r["verdict"] == VerdictValue.AGENT_ERROR:
        ET.SubElement(case, "error", message=message, type=VerdictValue.AGENT_ERROR)
    elif r["verdict"] in UNRATED:
        ET.SubElement(case, "skipped", message=message)
    ET.indent(case, level=2)
    return "\n    " + ET.tostring(case, encoding="unicode")


def render_junit(report: ReportV1) -> str:
    """A whole in-memory report as JUnit XML."""
    opening, closing = junit_frame(report)
    return opening + "".join(junit_case(r) for r in report["results"]) + closing
