"""Rung 1 — schema: the tool exists, its arguments are a JSON object valid against its schema.

Needs tool schemas: a domain's, or the definitions a trace captured itself. Validators are
compiled once per tool (JSON Schema 2020-12 with format checking, so `"format": "date"` rejects
"2026-13-45"), and results are memoised by (tool, argument text): validation is a pure function of
those two, and suites repeat the same calls constantly.

`jsonschema` is the reference. For a schema that uses only keywords in `FAST_KEYWORDS`, a
compiled `fastjsonschema` validator (measured ~8× faster) answers first — and it may only
*accept*: whenever it rejects, `jsonschema` decides and gives the messages. So a disagreement can
only ever cost time, never change a verdict in the unsafe direction, and
`tests/test_fast_validation.py` proves the two agree on every schema we ship over many generated
arguments.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import fastjsonschema
from jsonschema import Draft202012Validator
from jsonschema.exceptions import FormatError

from traceladder.domain.base import compile_validator
from traceladder.evaluators.inputs import TraceInputs
from traceladder.evaluators.safe_regex import matches
from traceladder.evaluators.types import Call, CallCheck, Finding, RungResult, RungStatus
from traceladder.evaluators.untrusted_schema import Uncheckable, untrusted_errors, untrusted_validator

if TYPE_CHECKING:
    from traceladder.evaluators.analysis import Analysis

NUMBER = 1
NAME = "schema"
NEEDS = frozenset({"tools"})
SURVIVORS_ONLY = False

_MEMO_LIMIT = 200_000
# Keywords whose meaning draft 7 (fastjsonschema) and 2020-12 (jsonschema) share exactly; a schema
# using any other keyword is validated by jsonschema alone.
FAST_KEYWORDS = frozenset(
    {
        "type", "properties", "required", "additionalProperties", "enum", "const", "pattern", "format",
        "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength",
        "minItems", "maxItems", "items", "description", "title", "default", "examples", "$comment",
    }
)  # fmt: skip
_FORMATS = Draft202012Validator.FORMAT_CHECKER


def _format(name: str) -> Callable[[Any], bool]:
    """fastjsonschema's check for a format, delegated to jsonschema's own checker: one definition
    of every format, so the two validators cannot disagree about one."""

    def conforms(value: Any) -> bool:
        try:
            _FORMATS.check(value, name)
        except FormatError:
            return False
        return True

    return conforms


def _keywords(schema: Any, found: set[str], formats: set[str]) -> None:
    if isinstance(schema, dict):
        found.update(k for k in schema if k != "properties")
        if isinstance(schema.get("format"), str):
            formats.add(schema["format"])
        for key, child in schema.items():
            if key == "properties" and isinstance(child, dict):
                found.add(key)
                for sub in child.values():
                    _keywords(sub, found, formats)
            elif key in ("items", "additionalProperties"):
                _keywords(child, found, formats)


def fast_validator(schema: Mapping[str, Any]) -> Callable[[Any], Any] | None:
    """A compiled fastjsonschema validator, or None when the schema uses a keyword outside
    `FAST_KEYWORDS` (or does not compile)."""
    found: set[str] = set()
    formats: set[str] = set()
    _keywords(schema, found, formats)
    if not found <= FAST_KEYWORDS or any(f not in _FORMATS.checkers for f in formats):
        return None
    try:
        return fastjsonschema.compile(dict(schema), formats={f: _format(f) for f in formats})
    except Exception:  # an unusual schema: the reference validator alone
        return None


class SchemaRegistry:
    """Compiled validators for one set of tools, and where they came from (`source`, e.g.
    `domain:retail` or `trace`)."""

    def __init__(
        self, schemas: Mapping[str, Mapping[str, Any]], source: str = "", trusted: bool = True
    ) -> None:
        self.schemas = {name: dict(schema) for name, schema in schemas.items()}
        self.source = source
        self.trusted = trusted
        # A schema someone else wrote is checked by a validator that cannot be made to hang.
        compile_ = compile_validator if trusted else untrusted_validator
        self.validators = {name: compile_(schema) for name, schema in self.schemas.items()}
        # fastjsonschema generates Python source from the schema: only for schemas we ship or the
        # user names, never for definitions a trace from elsewhere carried.
        self.fast = {name: fast_validator(schema) for name, schema in self.schemas.items()} if trusted else {}
        self._memo: dict[tuple[str, str, bool], tuple[str | None, str, tuple[tuple[str, str], ...]]] = {}
        self._uncheckable: dict[tuple[str, str, bool], str] = {}

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle as the schemas; the receiving process compiles its own validators."""
        return (SchemaRegistry, (self.schemas, self.source, self.trusted))

    def knows(self, tool: str) -> bool:
        return tool in self.validators

    def _judge(self, call: Call) -> tuple[str | None, str, tuple[tuple[str, str], ...]]:
        """(failure code or None, explanation, per-parameter errors) for one call, memoised by
        (tool, argument text): one dictionary lookup for every call seen before."""
        raw = call.raw if call.raw is not None else json.dumps(call.arguments, sort_keys=True)
        key = (call.name, raw, call.parsed)
        found = self._memo.get(key)
        if found is not None:
            return found
        if key in self._uncheckable:
            raise Uncheckable(self._uncheckable[key])
        validator = self.validators.get(call.name)
        errors: tuple[tuple[str, str], ...] = ()
        if validator is None:
            found = ("UNKNOWN_TOOL", f"{call.name}: tool does not exist", ())
        elif not call.parsed:
            found = ("PARAM_WRONG_FORMAT", f"{call.name}: arguments are not valid JSON: {call.raw!r}", ())
        elif not isinstance(call.arguments, dict):
            found = ("PARAM_WRONG_FORMAT", f"{call.name}: arguments are not a JSON object", ())
        elif self._fast_accepts(call.name, call.arguments):
            found = (None, "", ())
        else:
            try:
                raised = (
                    validator.iter_errors(call.arguments)
                    if self.trusted
                    else untrusted_errors(validator, call.arguments)
                )
            except Uncheckable as exc:  # remembered: the same call costs the budget once
                self._uncheckable[key] = str(exc)
                raise
            errors = tuple(
                (param, _clipped(err.message)) for err in raised for param in _params_of(err, call.arguments)
            )
            message = "; ".join(f"{call.name}: {msg}" for _, msg in errors)
            found = ("PARAM_WRONG_FORMAT" if errors else None, message, errors)
        if len(self._memo) >= _MEMO_LIMIT:
            self._memo.clear()
        self._memo[key] = found
        return found

    def _fast_accepts(self, tool: str, arguments: Any) -> bool:
        fast = self.fast.get(tool)
        if fast is None:
            return False
        try:
            fast(arguments)
        except Exception:  # rejected (or the fast validator failed): the reference decides
            return False
        return True

    def errors(self, call: Call) -> tuple[tuple[str, str], ...]:
        """(top-level parameter or "(arguments)", message) for every schema violation."""
        return self._judge(call)[2]

    def bad_params(self, call: Call) -> set[str]:
        return {param for param, _ in self._judge(call)[2]}

    def check(self, call: Call) -> tuple[str | None, str]:
        """(failure code or None, explanation) for one call."""
        code, message, _ = self._judge(call)
        return code, message

    def valid(self, call: Call) -> bool:
        return self._judge(call)[0] is None


def _clipped(message: str, limit: int = 2_000) -> str:
    """A validation message fit for a finding: jsonschema quotes the whole value, and a model's
    argument may be megabytes (the value itself is kept in the finding's `actual`)."""
    return (
        message
        if len(message) <= limit
        else message[:limit] + f"… ({len(message) - limit:,} more characters)"
    )


def _params_of(err: Any, arguments: dict[str, Any]) -> list[str]:
    """The top-level parameters an error is about. An error inside a parameter names it; a
    missing required parameter or an unexpected extra one is reported on the object itself, so
    name the parameter it is about (what a reader looks for: `order_id` missing, `orderId`
    unexpected), else "(arguments)"."""
    if err.absolute_path:
        return [str(err.absolute_path[0])]
    if err.validator == "required" and isinstance(err.validator_value, list):
        missing = [p for p in err.validator_value if isinstance(p, str) and p not in arguments]
        # one error per missing property, its message starting with the property's repr
        named = [p for p in missing if err.message.startswith(repr(p))]
        return (named or missing)[:1] or ["(arguments)"]
    if err.validator == "additionalProperties" and err.validator_value is False:
        known = err.schema.get("properties", {}) if isinstance(err.schema, dict) else {}
        patterns = err.schema.get("patternProperties", {}) if isinstance(err.schema, dict) else {}
        extra = [k for k in arguments if k not in known and not any(matches(p, k) for p in patterns)]
        return extra or ["(arguments)"]
    return ["(arguments)"]


def evaluate(inputs: TraceInputs, analysis: Analysis | None = None) -> RungResult:
    """Rung 1 over every actual call. Skipped when there are no calls to check."""
    assert inputs.tools is not None  # the ladder only calls a rung whose inputs are present
    return check_calls(inputs.calls, inputs.tools)


def check_calls(calls: Sequence[Call], registry: SchemaRegistry) -> RungResult:
    if not calls:
        return RungResult(NUMBER, NAME, "skipped", {}, explanation="no tool calls to check")
    checks, findings = [], []
    for call in calls:
        try:
            code, message, errors = registry._judge(call)
        except Uncheckable as exc:  # a captured schema no one can check this call against: no verdict
            return RungResult(
                NUMBER, NAME, "not_evaluated", {}, explanation=f"not evaluated: {call.name}: {exc}"
            )
        checks.append(
            CallCheck(
                "invalid" if code else "match",
                actual_ordinal=call.ordinal,
                actual_tool=call.name,
                code=code,
                message=message,
            )
        )
        if code and not errors:
            findings.append(
                Finding(NUMBER, code, message, tool=call.name, actual=call.raw, ordinal=call.ordinal)
            )
        for param, msg in errors:
            value = call.arguments.get(param) if param != "(arguments)" else call.arguments
            findings.append(
                Finding(
                    NUMBER,
                    code or "",
                    f"{call.name}: {msg}",
                    call.name,
                    param,
                    actual=value,
                    ordinal=call.ordinal,
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
        NUMBER,
        NAME,
        status,
        {"valid_fraction": valid / len(checks)},
        tuple(checks),
        tuple(findings),
        explanation,
    )
