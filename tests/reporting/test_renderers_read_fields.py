"""Renderers read fields, never parse prose (issue 34, point 3; decision 630).

A PASS's explanation ends with a note naming the rungs that could not run on it
(`evaluate.rungs.types.not_evaluated_note`). The ladder keeps the explanation without it as its own
field (`Verdict.reason` → `trace_results.reason` → ReportV1's `results[].reason`), so no module of
the report stage needs the note's wording: importing or naming `not_evaluated_note` there would mean
a renderer is taking the note off a text again."""

from __future__ import annotations

import ast

from tests.conftest import ROOT

REPORT = ROOT / "traceladder" / "report"
PROSE_MAKERS = {"not_evaluated_note"}  # the functions that write prose a reader could undo


def _uses(path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            found += [f"imports {a.name}" for a in node.names if a.name in PROSE_MAKERS]
        elif isinstance(node, ast.Name) and node.id in PROSE_MAKERS:
            found.append(f"names {node.id}")
        elif isinstance(node, ast.Attribute) and node.attr in PROSE_MAKERS:
            found.append(f"reads .{node.attr}")
    return found


def test_no_report_module_needs_the_wording_of_the_note():
    modules = sorted(REPORT.rglob("*.py"))
    assert len(modules) > 20  # the report stage, not an empty folder
    offenders = {str(p.relative_to(ROOT)): uses for p in modules if (uses := _uses(p))}
    assert offenders == {}


def test_the_case_table_shows_the_reason_field_whatever_the_explanation_says():
    """The page shows `reason` as it is: the text is never compared with the rung statuses. A
    PASS whose own words end like the note but whose reason says otherwise is shown by its reason;
    a report without the field (written before it existed) is shown whole."""
    from traceladder.report.html_cases import shown_explanation

    rungs = [{"rung": 6, "name": "invariants", "status": "not_evaluated", "scores": {}, "explanation": "x"}]
    case = {"verdict": "PASS", "explanation": "all matched (not evaluated: invariants)", "rungs": rungs}
    assert shown_explanation({**case, "reason": "all matched (not evaluated: invariants)"}) == (
        "all matched (not evaluated: invariants)"
    )
    assert shown_explanation({**case, "reason": "all matched"}) == "all matched"
    assert shown_explanation(case) == "all matched (not evaluated: invariants)"
