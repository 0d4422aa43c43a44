"""The typed documents (`report/documents.py`) and the published JSON Schemas stay in step.

Each TypedDict is paired with the schema object it restates; the pair must name the same keys and
require the same ones. A key added, dropped or made optional on one side only fails here. Every
object a schema defines with properties is paired, and every TypedDict of the module is used, so a
new object on either side cannot slip past. ComparisonV1 has no published schema: its TypedDicts are
held to a comparison `compare_sides` builds from real reports.
"""

from __future__ import annotations

import json
import typing
from pathlib import Path

import pytest

from traceladder.evaluate.rungs.types import VerdictValue
from traceladder.report import documents as d
from traceladder.report.comparison import compare_sides

SCHEMAS = Path(__file__).resolve().parents[2] / "traceladder" / "schemas"
REPORT, BASELINE = "report-v1.schema.json", "baseline-v1.schema.json"

# TypedDict → (schema file, JSON pointer of the object it restates)
PAIRS: dict[type, tuple[str, str]] = {
    d.ReportV1: (REPORT, ""),
    d.RunBlock: (REPORT, "/$defs/run"),
    d.InputHashes: (REPORT, "/$defs/run/properties/input_hashes"),
    d.Block: (REPORT, "/$defs/block"),
    d.Summary: (REPORT, "/$defs/summary"),
    d.TopFailure: (REPORT, "/$defs/summary/properties/top_failures/items"),
    d.WorstTool: (REPORT, "/$defs/summary/properties/top_worst_tools/items"),
    d.LadderRow: (REPORT, "/$defs/summary/properties/ladder/items"),
    d.JudgeBlock: (REPORT, "/$defs/summary/properties/judge"),
    d.ConversationBlock: (REPORT, "/$defs/conversation_block"),
    d.GoldenCall: (REPORT, "/$defs/golden_call"),
    d.ActualCall: (REPORT, "/$defs/actual_call"),
    d.ArgumentDiff: (REPORT, "/$defs/argument_diff"),
    d.Check: (REPORT, "/$defs/check_fields"),
    d.DiffEntry: (REPORT, "/$defs/diff_entry"),
    d.FindingEntry: (REPORT, "/$defs/finding"),
    d.RungEntry: (REPORT, "/$defs/rung"),
    d.IgnoredRead: (REPORT, "/$defs/ignored_read"),
    d.ServerQuirk: (REPORT, "/$defs/server_quirk"),
    d.RetriedRequest: (REPORT, "/$defs/retried_request"),
    d.Result: (REPORT, "/$defs/result"),
    d.ConversationFinding: (REPORT, "/$defs/conversation_finding"),
    d.ConversationTurn: (REPORT, "/$defs/conversation_turn"),
    d.Conversation: (REPORT, "/$defs/conversation"),
    d.BaselineV1: (BASELINE, ""),
    d.BaselineSummary: (BASELINE, "/properties/summary"),
    d.BaselineConsistency: (BASELINE, "/properties/consistency"),
    d.BaselineReview: (BASELINE, "/properties/review"),
    d.BaselineCase: (BASELINE, "/properties/cases/additionalProperties"),
    # the baseline restates the report's input hashes
    d.InputHashes | None: (BASELINE, "/properties/input_hashes"),  # type: ignore[dict-item]
}
# verdict → traces (`documents.VerdictCounts`, a plain dict): held to `VerdictValue` instead
VERDICT_COUNTS = {
    (REPORT, "/$defs/verdict_counts"), (BASELINE, "/properties/summary/properties/verdict_counts"),
}  # fmt: skip
COMPARISON_TYPES = {
    d.ComparisonV1, d.ComparisonSide, d.SideRate, d.McNemarBlock, d.DimensionRow, d.ClassRow, d.Flip,
    d.FlipEvidence,
}  # fmt: skip


def _schema(name: str) -> dict:
    return json.loads((SCHEMAS / name).read_text(encoding="utf-8"))


def _at(schema: dict, pointer: str) -> dict:
    node = schema
    for part in filter(None, pointer.split("/")):
        node = node[part]
    return node


def _keys(schema: dict, node: dict) -> tuple[set[str], set[str]]:
    """(every property, the required ones) of a schema object, following a `$ref` it extends."""
    props, required = set(node.get("properties", {})), set(node.get("required", ()))
    if "$ref" in node:
        more_props, more_required = _keys(schema, _at(schema, node["$ref"].removeprefix("#")))
        props, required = props | more_props, required | more_required
    return props, required


def _typed(td: type) -> type:
    return typing.get_args(td)[0] if typing.get_origin(td) is not None else td


@pytest.mark.parametrize("td", list(PAIRS), ids=lambda t: f"{_typed(t).__name__}")
def test_each_typed_document_has_its_schema_objects_keys(td):
    file, pointer = PAIRS[td]
    schema = _schema(file)
    props, required = _keys(schema, _at(schema, pointer))
    typed = _typed(td)
    assert set(typed.__required_keys__) | set(typed.__optional_keys__) == props, (
        f"{typed.__name__} and {file}#{pointer} name different keys"
    )
    assert set(typed.__required_keys__) == required, (
        f"{typed.__name__} and {file}#{pointer} require different keys"
    )


CONDITIONALS = {"allOf", "if", "then", "else", "not"}


@pytest.mark.parametrize(("file", "pointer"), sorted(VERDICT_COUNTS))
def test_the_schemas_verdict_counts_are_the_verdict_enum(file, pointer):
    """Seed 1's four verdicts are required; NOT_EVALUATED is present only when some trace had it."""
    schema = _schema(file)
    props, required = _keys(schema, _at(schema, pointer))
    assert props == {v.value for v in VerdictValue}
    assert required == props - {VerdictValue.NOT_EVALUATED}


def _objects(node: object, where: str = ""):
    """Every schema object that declares properties, with its JSON pointer. Conditionals (`allOf`
    of `if`/`then`/`else`) only constrain the values of properties declared elsewhere."""
    if isinstance(node, dict):
        if node.get("properties") and node.get("type") in ("object", ["object", "null"], None):
            yield where
        for key, value in node.items():
            if key not in CONDITIONALS:
                yield from _objects(value, f"{where}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _objects(value, f"{where}/{i}")


@pytest.mark.parametrize("file", [REPORT, BASELINE])
def test_every_object_a_published_schema_declares_has_a_typed_document(file):
    paired = {pointer for f, pointer in [*PAIRS.values(), *VERDICT_COUNTS] if f == file}
    assert set(_objects(_schema(file))) - paired == set()


def test_every_typed_document_is_paired_with_a_schema_or_checked_against_a_built_comparison():
    declared = {
        v
        for v in vars(d).values()
        if isinstance(v, type) and typing.is_typeddict(v) and v.__module__ == d.__name__
    }
    assert declared == {_typed(t) for t in PAIRS} | COMPARISON_TYPES


def _result(case_id, verdict, *, repeat=0, dimension="D1"):
    finding = {"rung": 2, "code": "WRONG_TOOL", "tool": "t", "param": None, "expected": "t", "actual": "u",
               "message": "called u"}  # fmt: skip
    return {
        "case_id": case_id, "repeat_index": repeat, "dimension": dimension, "trace_id": f"{case_id}-{repeat}",
        "verdict": verdict, "taxonomy": "WRONG_TOOL" if verdict == "FAIL" else None,
        "explanation": "why", "findings": [finding] if verdict == "FAIL" else [],
    }  # fmt: skip


def _report(run_id, model, verdicts, version=None):
    hashes = {"cases": "c" * 64, "tool_schemas": "t" * 64} | ({"agent_version": version} if version else {})
    run = {"run_id": run_id, "model": model, "input_hashes": hashes, "evaluator_version": "1"}
    return {"run": run, "results": [_result(c, v) for c, v in verdicts.items()]}


def _keys_of(td: type) -> tuple[set[str], set[str]]:
    return set(td.__required_keys__) | set(td.__optional_keys__), set(td.__required_keys__)


def _holds(value: dict, td: type) -> None:
    every, required = _keys_of(td)
    assert required <= set(value) <= every, f"{td.__name__}: built {sorted(value)}, typed {sorted(every)}"


def test_a_built_comparison_has_exactly_the_keys_of_its_typed_document():
    a = _report("ra", "m1", {"c1": "PASS", "c2": "FAIL", "c3": "PASS"}, version="v1")
    b = _report("rb", "m2", {"c1": "FAIL", "c2": "PASS", "c3": "PASS", "c4": "PASS"}, version="v2")
    built = compare_sides([a], [b])
    _holds(built, d.ComparisonV1)
    for side in (built["a"], built["b"]):
        _holds(side, d.ComparisonSide)
        assert "agent_version" in side
    _holds(built["mcnemar"], d.McNemarBlock)
    for row in built["dimensions"]:
        _holds(row, d.DimensionRow)
        _holds(row["a"], d.SideRate)
    for row in built["classes"]:
        _holds(row, d.ClassRow)
    assert {f["direction"] for f in built["flips"]} == {"regressed", "improved"}
    for flip in built["flips"]:
        _holds(flip, d.Flip)
        _holds(flip["evidence"], d.FlipEvidence)
