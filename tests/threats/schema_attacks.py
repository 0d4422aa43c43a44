"""Captured tool schemas (with an argument each) built to hang, crash or reach the network from a
validator: `python tests/threats/schema_attacks.py URL` judges each with rung 1 as a captured definition
and prints name → [status or "unusable", explanation, seconds] as JSON. Run in a subprocess by
tests/threats/test_hostile_patterns.py, so a regression is a timeout there, not a hung test session."""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from traceladder.evaluate.rungs.schema import check_calls
from traceladder.evaluate.rungs.types import Call
from traceladder.evaluate.trace_schemas import trace_registry


def obj(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def attacks(url: str) -> dict[str, tuple[dict[str, Any], Any]]:
    chain: dict[str, Any] = {f"d{i}": {"allOf": [{"$ref": f"#/$defs/d{i + 1}"}] * 2} for i in range(24)}
    chain["d24"] = {"type": "integer"}  # 2^24 paths to it: exponential work for `{"x": 1}`
    return {
        "ref_chain": ({**obj({"x": {"$ref": "#/$defs/d0"}}), "$defs": chain}, {"x": 1}),
        "unique_items": (obj({"xs": {"type": "array", "uniqueItems": True}}), {"xs": [{"a": i} for i in range(4000)]}),
        "unique_items_twice": (obj({"xs": {"type": "array", "uniqueItems": True}}),
                               {"xs": [{"a": i} for i in range(4000)] + [{"a": 7}]}),
        "ref_cycle": (obj({"a": {"$ref": "#/properties/a"}}), {"a": 1}),
        "multiple_of": (obj({"n": {"type": "number", "multipleOf": 0.5}}), {"n": 10**400}),
        "regex_format": (obj({"r": {"type": "string", "format": "regex"}}), {"r": "(" * 3000}),
        "huge_message": (obj({"s": {"type": "string", "maxLength": 1}}), {"s": "x" * 1_000_000}),
        # %2F decodes to "/" before the pointer is split: this one leads into an enum's data
        "encoded_ref": ({**obj({"x": {"$ref": "#/$defs/a%2Fenum%2F0"}}),
                         "$defs": {"a/enum/0": {}, "a": {"enum": [{"pattern": "^(a+)+$"}]}}}, {"x": "a"}),
        "url_ref": (obj({"x": {"allOf": [{"$ref": url}]}}), {"x": 1}),
        "superscript_index": ({**obj({"a": {"$ref": "#/prefixItems/\u00b3"}}), "prefixItems": [{}]}, {"a": 1}),
    }  # fmt: skip


def main(url: str) -> None:
    out = {}
    for name, (schema, arguments) in attacks(url).items():
        started = time.perf_counter()
        registry = trace_registry(name, (("t", json.dumps(schema), True),))
        if isinstance(registry, str):
            out[name] = ["unusable", registry, 0.0]
            continue
        rung = check_calls([Call("t", arguments, None)], registry)
        said = rung.explanation or "; ".join(f.message for f in rung.findings)
        out[name] = [rung.status, said, round(time.perf_counter() - started, 2)]
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1])
