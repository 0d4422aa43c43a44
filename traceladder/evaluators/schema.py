"""Rung 1 — schema: the tool exists, its arguments are a JSON object valid against its schema.

Validators are compiled once per tool (`Draft202012Validator` with format checking, so
`"format": "date"` rejects "2026-13-45"), and results are memoised by (tool, argument text):
validation is a pure function of those two, and suites repeat the same calls constantly.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from jsonschema import Draft202012Validator

from traceladder.evaluators.types import Call, CallCheck, Finding, RungResult, RungStatus

_MEMO_LIMIT = 200_000


class SchemaRegistry:
    """Compiled validators for one set of tools."""

    def __init__(self, schemas: Mapping[str, dict[str, Any]]) -> None:
        self.schemas = dict(schemas)
        self.validators = {
            name: Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
            for name, schema in schemas.items()
        }
        self._memo: dict[tuple[str, str], tuple[tuple[str, str], ...]] = {}

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle as the schemas; the receiving process compiles its own validators."""
        return (SchemaRegistry, (self.schemas,))

    def knows(self, tool: str) -> bool:
        return tool in self.validators

    def errors(self, call: Call) -> tuple[tuple[str, str], ...]:
        """(top-level parameter or "(arguments)", message) for every schema violation."""
        if not call.parsed or not isinstance(call.arguments, dict):
            return ()
        key = (call.name, call.raw if call.raw is not None else json.dumps(call.arguments, sort_keys=True))
        found = self._memo.get(key)
        if found is None:
            validator = self.validators[call.name]
            found = tuple(
                (str(err.absolute_path[0]) if err.absolute_path else "(arguments)", err.message)
                for err in validator.iter_errors(call.arguments)
            )
            if len(self._memo) >= _MEMO_LIMIT:
                self._memo.clear()
            self._memo[key] = found
        return found

    def bad_params(self, call: Call) -> set[str]:
        return {param for param, _ in self.errors(call)}

    def check(self, call: Call) -> tuple[str | None, str]:
        """(failure code or None, explanation) for one call."""
        if not self.knows(call.name):
            return "UNKNOWN_TOOL", f"{call.name}: tool does not exist"
        if not call.parsed:
            return "PARAM_WRONG_FORMAT", f"{call.name}: arguments are not valid JSON: {call.raw!r}"
        if not isinstance(call.arguments, dict):
            return "PARAM_WRONG_FORMAT", f"{call.name}: arguments are not a JSON object"
        errors = self.errors(call)
        if errors:
            return "PARAM_WRONG_FORMAT", "; ".join(f"{call.name}: {msg}" for _, msg in errors)
        return None, ""


def evaluate(calls: Sequence[Call], registry: SchemaRegistry) -> RungResult:
    """Rung 1 over every actual call. Skipped when there are no calls to check."""
    if not calls:
        return RungResult(1, "schema", "skipped", {}, explanation="no tool calls to check")
    checks, findings = [], []
    for call in calls:
        code, message = registry.check(call)
        checks.append(
            CallCheck(
                "invalid" if code else "match",
                actual_ordinal=call.ordinal,
                actual_tool=call.name,
                code=code,
                message=message,
            )
        )
        if code == "UNKNOWN_TOOL" or (code and not registry.errors(call)):
            findings.append(Finding(1, code, message, tool=call.name, actual=call.raw, ordinal=call.ordinal))
        elif code:
            for param, msg in registry.errors(call):
                value = call.arguments.get(param) if param != "(arguments)" else call.arguments
                findings.append(
                    Finding(
                        1, code, f"{call.name}: {msg}", call.name, param, actual=value, ordinal=call.ordinal
                    )
                )
    valid = sum(1 for c in checks if c.code is None)
    status: RungStatus = "pass" if valid == len(checks) else "fail"
    explanation = (
        f"{valid}/{len(checks)} calls schema-valid"
        if status == "pass"
        else "; ".join(c.message for c in checks if c.code)
    )
    return RungResult(
        1,
        "schema",
        status,
        {"valid_fraction": valid / len(checks)},
        tuple(checks),
        tuple(findings),
        explanation,
    )
