"""Rung 1 classifies a schema error by its kind, the class rung 2 gives the same defect offline: a
missing required property is PARAM_MISSING, a property the schema does not allow PARAM_UNEXPECTED,
a wrong type or format PARAM_WRONG_FORMAT — live (definitions a trace captured, the untrusted
validator) and offline (a domain's schemas) alike (docs/judging.md)."""

from __future__ import annotations

import json

import pytest

from traceladder.evaluate.rungs import matching
from traceladder.evaluate.rungs.schema import SchemaRegistry, check_calls
from traceladder.evaluate.rungs.types import Call, Expected
from traceladder.evaluate.trace_schemas import trace_registry

SCHEMA = {
    "type": "object",
    "properties": {
        "order_id": {"type": "string", "pattern": "^W[0-9]+$"},
        "when": {"type": "string", "format": "date"},
        "address": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
    "required": ["order_id"],
    "additionalProperties": False,
}
GOLDEN = {"order_id": "W1"}
DEFECTS = {  # arguments → the class both sides give
    "missing": ({}, "PARAM_MISSING"),
    "unexpected": ({"order_id": "W1", "orderId": "W1"}, "PARAM_UNEXPECTED"),
    "wrong type": ({"order_id": 1}, "PARAM_WRONG_FORMAT"),
    "wrong pattern": ({"order_id": "X1"}, "PARAM_WRONG_FORMAT"),
    "wrong format": ({"order_id": "W1", "when": "2026-13-45"}, "PARAM_WRONG_FORMAT"),
    "nested missing": ({"order_id": "W1", "address": {}}, "PARAM_WRONG_FORMAT"),
}


def live() -> SchemaRegistry:
    registry = trace_registry("rung1-classes", (("get_order", json.dumps(SCHEMA), True),))
    assert isinstance(registry, SchemaRegistry), registry
    return registry


@pytest.mark.parametrize("defect", DEFECTS)
def test_the_same_defect_gets_the_same_class_live_and_offline(defect):
    arguments, expected = DEFECTS[defect]
    call = Call("get_order", arguments, json.dumps(arguments), ordinal=1)
    offline = SchemaRegistry({"get_order": SCHEMA}, "domain:test")
    got = {}
    for side, registry in (("live", live()), ("offline", offline)):
        result = check_calls([call], registry)
        assert result.status == "fail", (side, result.explanation)
        got[side] = (result.checks[0].code, {f.code for f in result.findings})
    assert got == {"live": (expected, {expected}), "offline": (expected, {expected})}


@pytest.mark.parametrize("defect", ["missing", "unexpected"])
def test_rung_two_names_the_top_level_defects_the_same_way(defect):
    arguments, expected = DEFECTS[defect]
    diffs = matching.arguments_match(
        Expected("get_order", GOLDEN), Call("get_order", arguments, None, ordinal=1)
    )
    assert matching.call_code(diffs) == expected


def test_a_call_with_several_defects_takes_the_dominant_class_and_keeps_each():
    call = Call("get_order", {"orderId": "W1", "when": "soon"}, None, ordinal=1)
    result = check_calls([call], live())
    assert result.checks[0].code == "PARAM_MISSING"
    assert sorted((f.param, f.code) for f in result.findings) == [
        ("orderId", "PARAM_UNEXPECTED"), ("order_id", "PARAM_MISSING"), ("when", "PARAM_WRONG_FORMAT")]  # fmt: skip
