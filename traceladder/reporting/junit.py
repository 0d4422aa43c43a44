"""Rendering a ReportV1 as JUnit XML for CI test tabs: one <testcase> per judged trace.

Every string from the run (names, messages, model output) goes through `xml_text`: a model that
emits ESC or NUL must not make the CI artifact unparsable.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from traceladder.evaluators.types import UNRATED, VerdictValue
from traceladder.reporting.build import result_name
from traceladder.text import xml_text


def render_junit(report: dict[str, Any]) -> str:
    """FAIL → <failure>, AGENT_ERROR → <error>, SKIP and NOT_EVALUATED → <skipped>."""
    s = report["summary"]["verdict_counts"]
    suite = ET.Element(
        "testsuite",
        name=xml_text(f"traceladder {report['run'].get('run_id')}"),
        tests=str(len(report["results"])),
        failures=str(s[VerdictValue.FAIL]),
        errors=str(s[VerdictValue.AGENT_ERROR]),
        skipped=str(sum(s.get(v, 0) for v in UNRATED)),
    )
    for r in report["results"]:
        # the full trace id: a JUnit test name is the identifier CI tools keep a test's history by
        name = result_name(r, trace_chars=None)
        case = ET.SubElement(
            suite, "testcase", classname=xml_text(f"traceladder.{r['dimension']}"), name=xml_text(name)
        )
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
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
