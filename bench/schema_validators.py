"""One schema validator: rung 1's (jsonschema-rs, decision 380) against jsonschema, in one run.

Until decision 380 rung 1 accepted with fastjsonschema and explained with jsonschema. This bench
times, on the retail domain's tool schemas, what rung 1 does now against jsonschema (the anchor:
the previous explainer, and the reference implementation):

- accept: the suite's golden calls (all valid), by rung 1's `SchemaRegistry` (a distinct argument
  text per call, so no memo hit) and by jsonschema's `is_valid`;
- explain: the same calls made invalid (a required argument dropped, an unknown one added, a
  wrong type), errors enumerated by `schema_errors` (the one validator) and by jsonschema.

It prints each figure (CPU seconds) with the anchor measured in the same run, and whether the two
agree on validity (verdicts) and error counts.

    python bench/schema_validators.py [--smoke] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from measures import add_options, measure, reporting  # bench/measures.py

from traceladder.evaluate.rungs.untrusted_schema import compile_schema, schema_errors
from traceladder.suite.domain.registry import load_domain


def calls(repeat: int) -> tuple[list[tuple[str, dict[str, Any]]], list[tuple[str, dict[str, Any]]]]:
    domain = load_domain("retail")
    assert domain.suite_path is not None
    golden = []
    for line in domain.suite_path.read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        golden += [(c["tool"], c["params"]) for c in case["golden"]["calls"]]
    invalid = []
    for tool, params in golden:
        schema = domain.tool_schemas[tool]
        required = schema.get("required", [])
        if required:
            invalid.append((tool, {k: v for k, v in params.items() if k != required[0]}))
        invalid.append((tool, {**params, "unexpected_arg": 1}))
        if params:
            key = next(iter(params))
            invalid.append((tool, {**params, key: [params[key]]}))
    return golden * repeat, invalid * repeat


def timed(fn: Any) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def main() -> int:
    parser = argparse.ArgumentParser()
    add_options(parser)
    args = parser.parse_args()
    with reporting(args):
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from jsonschema import Draft202012Validator

    from traceladder.evaluate.rungs.schema import SchemaRegistry
    from traceladder.evaluate.rungs.types import Call

    domain = load_domain("retail")
    schemas = domain.tool_schemas
    valid, invalid = calls(2 if args.smoke else 60)
    formats = Draft202012Validator.FORMAT_CHECKER
    reference = {name: Draft202012Validator(s, format_checker=formats) for name, s in schemas.items()}
    ours = {name: compile_schema(s, trusted=True) for name, s in schemas.items()}
    registry = SchemaRegistry(schemas, "bench")  # compiled before timing, as rung 1 does once

    def rung1_accept() -> None:
        for n, (tool, params) in enumerate(valid):  # a distinct text per call: no memo hit
            registry.valid(Call(tool, params, json.dumps({**params, "_": n})))

    def rung1_explain() -> None:
        for n, (tool, params) in enumerate(invalid):
            registry.errors(Call(tool, params, json.dumps({**params, "_": n})))

    pairs = {
        "accept (valid calls), rung 1": (lambda: [reference[t].is_valid(p) for t, p in valid], rung1_accept),
        "explain (invalid calls), rung 1": (
            lambda: [list(reference[t].iter_errors(p)) for t, p in invalid],
            rung1_explain,
        ),
        "explain (invalid calls), schema_errors": (
            lambda: [list(reference[t].iter_errors(p)) for t, p in invalid],
            lambda: [schema_errors(ours[t], p) for t, p in invalid],
        ),
    }
    print(f"schema_validators: {len(valid):,} valid and {len(invalid):,} invalid retail calls, CPU s")
    for label, (anchor, candidate) in pairs.items():
        a, b = timed(anchor), timed(candidate)
        print(
            f"  {label:40s} jsonschema {a:7.3f}  ours {b:7.3f}  ratio jsonschema/ours {a / max(b, 1e-9):5.1f}x"
        )
        measure(f"{label}", b, "CPU s", baseline=max(a, 1e-9), baseline_name="jsonschema")
    agree = all(ours[t].is_valid(p) for t, p in valid) and not any(ours[t].is_valid(p) for t, p in invalid)
    counts = sum(len(list(reference[t].iter_errors(p))) == len(schema_errors(ours[t], p)) for t, p in invalid)
    print(f"  verdicts agree: {agree}; error counts agree on {counts}/{len(invalid)} invalid calls")
    return 0


if __name__ == "__main__":
    sys.exit(main())
