"""The one validator judges as the reference does (decision 380): over every tool schema we ship
and many generated arguments — valid, almost valid, and wrong in every way the schemas can catch —
rung 1's registry (jsonschema-rs) gives the verdict jsonschema, the reference implementation of
JSON Schema 2020-12 with format checking, gives, and puts its errors in the same places. (The
messages are each library's own wording.)"""

from __future__ import annotations

import json
import string
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError

from tests.evaluators.test_evaluators import TOOL_SCHEMAS as SEED2_SCHEMAS
from traceladder.evaluate.rungs.safe_regex import search
from traceladder.evaluate.rungs.schema import SchemaRegistry
from traceladder.evaluate.rungs.types import Call
from traceladder.evaluate.rungs.untrusted_schema import schema_errors
from traceladder.suite.domain.retail import load_retail_domain

RETAIL = load_retail_domain().tool_schemas
SCHEMAS: dict[str, dict[str, Any]] = {**RETAIL, **{f"seed2_{k}": v for k, v in SEED2_SCHEMAS.items()}}
REGISTRY = SchemaRegistry(SCHEMAS)


def _ecma_pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Any:
    """`pattern` in ECMA-262's meaning (RE2, translated: `\\d` is ASCII), not Python `re`'s."""
    if validator.is_type(instance, "string") and not search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


# jsonschema, the reference implementation, with patterns meaning what JSON Schema says they mean
Reference = validators.extend(Draft202012Validator, {"pattern": _ecma_pattern})
REFERENCE = {
    name: Reference(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    for name, schema in SCHEMAS.items()
}

# Values that probe every keyword: dates real and impossible, ids right and wrong, numbers on the
# bounds, booleans where numbers go, unicode, empty and oversized strings, nested junk.
EDGE_STRINGS = [
    "", "W441", "W4410", "w441", "W441\n", "U101", "P204", "I2041", "ACT-001", "2026-06-20", "2026-02-30",
    "2026-13-45", "2026-6-20", "20260620", "changed_mind", "other", "CN", "cn", "x" * 600, "中文", "𝟙𝟚𝟛",
]  # fmt: skip
leaf = st.one_of(
    st.sampled_from(EDGE_STRINGS),
    st.text(string.printable, max_size=12),
    st.integers(-3, 1000),
    st.sampled_from([0, 1, 0.5, 1.0, 99.99, -0.0, 1e308]),
    st.booleans(),
    st.none(),
)
json_values = st.recursive(leaf, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                         st.dictionaries(st.sampled_from(["item_id", "quantity", "x"]), inner, max_size=3)),
                           max_leaves=6)  # fmt: skip


DATES = ["2026-06-20", "2026-02-28", "2026-02-29", "2026-02-30", "2026-04-31", "2026-13-01", "2026-00-10",
         "2026-6-20", "2026-06-20T10:00:00", " 2026-06-20", "2026-06-20\n"]  # fmt: skip


def value_for(sub: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values aimed at the keywords of one property's schema, and at every way to miss them."""
    options: list[st.SearchStrategy[Any]] = [json_values]
    kind = sub.get("type")
    if kind == "string":
        options.append(st.sampled_from(EDGE_STRINGS))
        if "pattern" in sub:
            matching = st.from_regex(sub["pattern"], fullmatch=True)
            options += [matching, matching, matching.map(lambda v: v + "\n"), matching.map(str.lower)]
        if sub.get("format") == "date":
            options += [st.sampled_from(DATES), st.dates().map(str)]
        for bound in ("minLength", "maxLength"):
            if bound in sub:
                n = sub[bound]
                options.append(st.text(string.ascii_letters, min_size=max(0, n - 1), max_size=n + 1))
    if kind in ("integer", "number"):
        edges: list[Any] = [True, False, 0, 1, 1.0, 0.5, -1, 10**6]
        for bound in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            if bound in sub:
                edges += [sub[bound], sub[bound] - 1, sub[bound] + 1, sub[bound] + 0.5, float(sub[bound])]
        options.append(st.sampled_from(edges))
    if "enum" in sub:
        options += [st.sampled_from(sub["enum"]), st.sampled_from([str(v).upper() for v in sub["enum"]])]
    if kind == "object" and "properties" in sub:
        options.append(arguments_for(sub))
    if kind == "array":
        options.append(st.lists(value_for(sub.get("items", {})), max_size=3))
    return st.one_of(options)


@st.composite
def arguments_for(draw: st.DrawFn, schema: dict[str, Any]) -> Any:
    """An argument object for a schema: its own keys with values aimed at their keywords,
    sometimes a key missing or an unknown key, sometimes not an object at all."""
    if draw(st.integers(0, 19)) == 0:
        return draw(json_values)
    out: dict[str, Any] = {}
    for key, sub in schema.get("properties", {}).items():
        if draw(st.integers(0, 7)) == 0:
            continue  # missing
        out[key] = draw(value_for(sub))
    if draw(st.integers(0, 9)) == 0:
        out["unexpected"] = draw(json_values)
    return out


def _bases() -> dict[str, list[dict[str, Any]]]:
    """Valid argument objects per tool: the suite's golden arguments and seed 2's."""
    from traceladder.suite.cases import load_cases

    bases: dict[str, list[dict[str, Any]]] = {}
    for case in load_cases():
        for golden in case.calls:
            bases.setdefault(golden.tool, []).append(golden.params)
    bases["seed2_search_flights"] = [{"origin": "SFO", "destination": "JFK", "date": "2026-11-02"}]
    bases["seed2_book_flight"] = [{"flight_id": "UA-512"}]
    return bases


BASES = _bases()


@st.composite
def one_field_wrong(draw: st.DrawFn, tool: str) -> Any:
    """A valid call with exactly one field (at any depth) replaced by a value aimed at its
    schema: the only way a single ignored keyword (a bound, a length) can show."""
    arguments = json.loads(json.dumps(draw(st.sampled_from(BASES[tool]))))
    schema = SCHEMAS[tool]
    node, sub = arguments, schema
    while True:
        keys = [k for k in node if k in sub.get("properties", {})]
        if not keys:
            return arguments
        key = draw(st.sampled_from(keys))
        child = sub["properties"][key]
        if child.get("type") == "array" and isinstance(node[key], list) and node[key] and draw(st.booleans()):
            node, sub = node[key][0], child.get("items", {})
        elif child.get("type") == "object" and isinstance(node[key], dict) and draw(st.booleans()):
            node, sub = node[key], child
        else:
            node[key] = draw(value_for(child))
            return arguments


def agree(tool: str, arguments: Any) -> None:
    """The registry's verdict and error places are the reference's, for one call."""
    code, _, _ = REGISTRY._judge(Call(tool, arguments, json.dumps(arguments)))
    assert (code is None) == REFERENCE[tool].is_valid(arguments), (tool, arguments)
    want = sorted(tuple(map(str, e.absolute_path)) for e in REFERENCE[tool].iter_errors(arguments))
    got = sorted(
        tuple(map(str, e.absolute_path)) for e in schema_errors(REGISTRY.validators[tool], arguments)
    )
    assert got == want, (tool, arguments)


@pytest.mark.parametrize("tool", sorted(SCHEMAS))
@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_validator_and_the_reference_agree(tool, data):
    mostly_valid = tool in BASES and data.draw(st.booleans())
    arguments = data.draw(one_field_wrong(tool) if mostly_valid else arguments_for(SCHEMAS[tool]))
    if isinstance(arguments, dict):
        agree(tool, arguments)


def test_the_golden_calls_of_the_suite_are_valid():
    from traceladder.suite.cases import load_cases

    for case in load_cases():
        for golden in case.calls:
            call = Call(golden.tool, golden.params, json.dumps(golden.params))
            assert REGISTRY._judge(call) == (None, "", ())
            agree(golden.tool, golden.params)
