"""One schema validator? `jsonschema-rs` against today's pair, in one run (issue 30 point 2).

Today rung 1 accepts with fastjsonschema (trusted schemas) and explains with jsonschema (the RE2
`LinearRegexValidator` for untrusted ones). This bench times, on the retail domain's tool schemas:

- accept: the suite's golden calls (all valid), checked by today's path (`SchemaRegistry`, fast
  path on) and by `jsonschema_rs` (`is_valid`, RegexOptions: the linear-time regex engine);
- explain: the same calls made invalid (a required argument dropped, an unknown one added, a
  wrong type), errors enumerated by jsonschema (trusted), by the untrusted linear validator, and
  by `jsonschema_rs.iter_errors`.

It reports each figure (CPU seconds) with today's path measured in the same run as its baseline,
and prints whether the two sides agree on validity (verdicts), error counts and messages.
`jsonschema-rs` is a dev dependency (the candidate; decision 226), not a runtime one.

    python bench/schema_validators.py [--smoke] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from measures import add_options, measure, reporting  # bench/measures.py

from traceladder.domain.registry import load_domain
from traceladder.evaluators.untrusted_schema import compile_schema, schema_errors


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
    import jsonschema_rs

    from traceladder.evaluators.schema import SchemaRegistry
    from traceladder.evaluators.types import Call

    domain = load_domain("retail")
    schemas = domain.tool_schemas
    valid, invalid = calls(2 if args.smoke else 60)
    rs = {
        name: jsonschema_rs.Draft202012Validator(
            schema, validate_formats=True, pattern_options=jsonschema_rs.RegexOptions(),
            retriever=lambda uri: (_ for _ in ()).throw(ValueError(f"{uri}: not fetched")),
        )
        for name, schema in schemas.items()
    }  # fmt: skip
    trusted = {name: compile_schema(s, trusted=True) for name, s in schemas.items()}
    untrusted = {name: compile_schema(s, trusted=False) for name, s in schemas.items()}

    registry = SchemaRegistry(schemas, "bench")  # compiled before timing, as rung 1 does once

    def today_accept() -> None:
        for n, (tool, params) in enumerate(valid):  # a distinct text per call: no memo hit
            registry.valid(Call(tool, params, json.dumps({**params, "_": n})))

    anchors = {
        "accept (valid calls)": (today_accept, lambda: [rs[t].is_valid(p) for t, p in valid]),
        "explain, trusted (invalid calls)": (
            lambda: [schema_errors(trusted[t], p) for t, p in invalid],
            lambda: [list(rs[t].iter_errors(p)) for t, p in invalid],
        ),
        "explain, untrusted (invalid calls)": (
            lambda: [schema_errors(untrusted[t], p) for t, p in invalid],
            lambda: [list(rs[t].iter_errors(p)) for t, p in invalid],
        ),
    }
    print(f"schema_validators: {len(valid):,} valid and {len(invalid):,} invalid retail calls, CPU s")
    for label, (today, candidate) in anchors.items():
        a, b = timed(today), timed(candidate)
        print(
            f"  {label:36s} today {a:7.3f}  jsonschema-rs {b:7.3f}  ratio today/rs {a / max(b, 1e-9):5.1f}x"
        )
        measure(f"{label}: jsonschema-rs", b, "CPU s", baseline=max(a, 1e-9), baseline_name="today's path")
    agree = all(rs[t].is_valid(p) for t, p in valid) and not any(rs[t].is_valid(p) for t, p in invalid)
    counts = sum(len(schema_errors(trusted[t], p)) == len(list(rs[t].iter_errors(p))) for t, p in invalid)
    same = sum(
        [e.message for e in schema_errors(trusted[t], p)] == [e.message for e in rs[t].iter_errors(p)]
        for t, p in invalid
    )
    print(f"  verdicts agree: {agree}; error counts agree on {counts}/{len(invalid)} invalid calls; "
          f"messages word for word on {same}/{len(invalid)}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
