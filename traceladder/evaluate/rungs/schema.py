"""Rung 1 — schema: the tool exists, its arguments are a JSON object valid against its schema.

Needs tool schemas: a domain's, or the definitions a trace captured itself. Validators are
compiled once per tool (JSON Schema 2020-12 with format checking, so `"format": "date"` rejects
"2026-13-45"), and results are memoised by (tool, argument text): validation is a pure function of
those two, and suites repeat the same calls constantly.

One validator (`untrusted_schema.compile_schema`, jsonschema-rs) both accepts and explains: a
valid call costs one compiled `is_valid`-speed pass, an invalid one its errors enumerated by the
same compiled schema (decision 380), never a second library re-walking the schema per error.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from traceladder.evaluate.rungs.classes import dominant
from traceladder.evaluate.rungs.inputs import TraceInputs
from traceladder.evaluate.rungs.types import ArgDiff, Call, CallCheck, Finding, RungResult, RungStatus
from traceladder.evaluate.rungs.untrusted_schema import Uncheckable, Violation, compile_schema, schema_errors

if TYPE_CHECKING:
    from traceladder.evaluate.rungs.analysis import Analysis

NUMBER = 1
NAME = "schema"
# Runs on every trace: the schema-free checks (the arguments are a JSON object) need no definitions.
NEEDS: frozenset[str] = frozenset()
NO_SCHEMA = "NO_SCHEMA"  # internal: the call could not be checked against a schema (never a finding)
SURVIVORS_ONLY = False

_MEMO_LIMIT = 200_000


class SchemaRegistry:
    """Compiled validators for one set of tools, and where they came from (`source`, e.g.
    `domain:retail` or `trace`).

    `unreadable`: tools that were defined but whose parameters schema was not recorded (or not in
    a shape we read) — a call to one is not checked against a schema, never judged valid.
    `complete`: the set is everything the model was offered; False when the definitions were
    seen only on tool spans (so only for tools that ran), where a tool not in the set is not
    "unknown", just not described."""

    def __init__(
        self,
        schemas: Mapping[str, Mapping[str, Any]],
        source: str = "",
        trusted: bool = True,
        *,
        unreadable: frozenset[str] = frozenset(),
        complete: bool = True,
    ) -> None:
        self.schemas = {name: dict(schema) for name, schema in schemas.items()}
        self.source = source
        self.trusted = trusted
        self.unreadable = unreadable - self.schemas.keys()
        self.complete = complete
        # A schema someone else wrote is checked by a validator that cannot be made to hang.
        self.validators = {name: compile_schema(s, trusted=trusted) for name, s in self.schemas.items()}
        self._memo: dict[tuple[str, str, bool], tuple[str | None, str, tuple[tuple[str, str, str], ...]]] = {}
        self._uncheckable: dict[tuple[str, str, bool], str] = {}
        # rung 1's whole answer for one call at one position (`check_calls`): its kind (_VALID,
        # _UNCHECKED, _FAILED), its check, its findings and its message
        self._outcomes: dict[tuple[str, str, bool, int], Outcome] = {}
        # the reference rungs' memos of what is judged against these tools, kept here so they live
        # exactly as long as the evaluation's context (`analysis.Analysis.diffs`, `_why_shared`)
        self.pair_diffs: dict[tuple[Any, ...], tuple[Any, Any, tuple[ArgDiff, ...]]] = {}
        self.ignorable: dict[tuple[Any, ...], tuple[Any, str]] = {}

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle as the schemas; the receiving process compiles its own validators."""
        return (_rebuild, (self.schemas, self.source, self.trusted, self.unreadable, self.complete))

    def knows(self, tool: str) -> bool:
        """Whether the tool exists by this set (a tool the set cannot vouch for counts as known)."""
        return tool in self.validators or tool in self.unreadable or not self.complete

    def why_unchecked(self, tool: str) -> str | None:
        """Why calls to `tool` are not checked against a schema, or None when they are."""
        if tool in self.validators:
            return None
        if tool in self.unreadable:
            return f"{tool}: its definition was captured without a readable parameters schema"
        if not self.complete:
            return (
                f"{tool}: no definition; this trace's definitions were seen only on tool spans, "
                "so only for tools that ran"
            )
        return None

    def _judge(self, call: Call) -> tuple[str | None, str, tuple[tuple[str, str, str], ...]]:
        """(failure code or None, explanation, per-parameter (param, message, class) errors) for one
        call, memoised by (tool, argument text): one dictionary lookup for every call seen before.
        The call's class is the dominant of its errors' classes (`error_class`)."""
        raw = call.raw if call.raw is not None else json.dumps(call.arguments, sort_keys=True)
        key = (call.name, raw, call.parsed)
        found = self._memo.get(key)
        if found is not None:
            return found
        if key in self._uncheckable:
            raise Uncheckable(self._uncheckable[key])
        validator = self.validators.get(call.name)
        errors: tuple[tuple[str, str, str], ...] = ()
        unchecked = self.why_unchecked(call.name) if validator is None else None
        shape = format_problem(call)
        if validator is None and unchecked is None:
            found = ("UNKNOWN_TOOL", f"{call.name}: tool does not exist", ())
        elif shape is not None:  # no schema is needed to know such a call can never run
            found = ("PARAM_WRONG_FORMAT", shape, ())
        elif validator is None:
            found = (NO_SCHEMA, f"not evaluated: {unchecked}", ())
        else:
            try:
                raised = schema_errors(validator, call.arguments)
            except Uncheckable as exc:  # remembered: the same call costs the budget once
                self._uncheckable[key] = str(exc)
                raise
            errors = tuple(
                (param, _clipped(err.message), error_class(err))
                for err in raised
                for param in _params_of(err, call.arguments)
            )
            message = "; ".join(f"{call.name}: {msg}" for _, msg, _ in errors)
            found = (dominant(code for _, _, code in errors), message, errors)
        if len(self._memo) >= _MEMO_LIMIT:
            self._memo.clear()
        self._memo[key] = found
        return found

    def errors(self, call: Call) -> tuple[tuple[str, str], ...]:
        """(top-level parameter or "(arguments)", message) for every schema violation."""
        return tuple((param, message) for param, message, _ in self._judge(call)[2])

    def bad_params(self, call: Call) -> set[str]:
        return {param for param, _, _ in self._judge(call)[2]}

    def check(self, call: Call) -> tuple[str | None, str]:
        """(failure code or None, explanation) for one call."""
        code, message, _ = self._judge(call)
        return code, message

    def valid(self, call: Call) -> bool:
        """Schema-valid, proven: a call that could not be checked is not valid."""
        return self._judge(call)[0] is None


def _rebuild(
    schemas: Mapping[str, Mapping[str, Any]],
    source: str,
    trusted: bool,
    unreadable: frozenset[str],
    complete: bool,
) -> SchemaRegistry:
    return SchemaRegistry(schemas, source, trusted, unreadable=unreadable, complete=complete)


# A schema error's class, by the keyword that failed — the classes rung 2 gives the same defect
# offline (docs/judging.md): a missing required property is PARAM_MISSING, a property the schema
# does not allow PARAM_UNEXPECTED, anything else (type, format, pattern, enum, bounds) about a
# value that is there PARAM_WRONG_FORMAT.
_CLASS_OF_KEYWORD = {
    "required": "PARAM_MISSING",
    "dependentRequired": "PARAM_MISSING",
    "additionalProperties": "PARAM_UNEXPECTED",
    "unevaluatedProperties": "PARAM_UNEXPECTED",
}


def error_class(err: Violation) -> str:
    """The failure class of one schema error (see `_CLASS_OF_KEYWORD`), for the arguments object
    itself; an error inside a parameter (a nested property missing) is about that parameter's
    format, as rung 2 classifies it. `additionalProperties` given a schema (not `false`) fails
    on a value's format, so it names no unexpected property."""
    if err.absolute_path:  # inside a parameter: that parameter's value is malformed (as rung 2 says)
        return "PARAM_WRONG_FORMAT"
    if err.keyword in ("additionalProperties", "unevaluatedProperties") and not err.unexpected:
        return "PARAM_WRONG_FORMAT"
    return _CLASS_OF_KEYWORD.get(err.keyword, "PARAM_WRONG_FORMAT")


def arguments_absent(call: Call) -> bool:
    """Whether the producer recorded no arguments for the call at all (AutoGen records names and
    ids only): absent is not invalid, so such a call is `not_evaluated`, never PARAM_WRONG_FORMAT."""
    return call.raw is None and call.arguments is None


def _absent_message(call: Call) -> str:
    return f"not evaluated: {call.name} (call {call.ordinal}): the producer recorded no arguments for it"


def format_problem(call: Call) -> str | None:
    """The schema-free check: why the call's arguments can never be a tool's input (not valid
    JSON, or JSON that is not an object), or None. Needs no definition."""
    if not call.parsed:
        return f"{call.name}: arguments are not valid JSON: {call.raw!r}"
    if not isinstance(call.arguments, dict):
        return f"{call.name}: arguments are not a JSON object"
    return None


def _clipped(message: str, limit: int = 2_000) -> str:
    """A validation message fit for a finding: jsonschema quotes the whole value, and a model's
    argument may be megabytes (the value itself is kept in the finding's `actual`)."""
    return (
        message
        if len(message) <= limit
        else message[:limit] + f"… ({len(message) - limit:,} more characters)"
    )


def _params_of(err: Violation, arguments: dict[str, Any]) -> list[str]:
    """The top-level parameters an error is about. An error inside a parameter names it; a
    missing required parameter or an unexpected extra one is reported on the object itself, so
    name the parameter it is about (what a reader looks for: `order_id` missing, `orderId`
    unexpected), else "(arguments)"."""
    if err.absolute_path:
        return [str(err.absolute_path[0])]
    if err.missing is not None:
        return [err.missing]
    return list(err.unexpected) or ["(arguments)"]


def evaluate(inputs: TraceInputs, analysis: Analysis | None = None) -> RungResult:
    """Rung 1 over every actual call. Skipped when there are no calls to check. Without tool
    schemas only the schema-free check runs: a call whose arguments are not a JSON object fails;
    otherwise the rung is `not_evaluated` (why the schemas are absent)."""
    if inputs.tools is None:
        return check_shapes(inputs.calls, inputs.why_absent("tools"))
    return check_calls(inputs.calls, inputs.tools)


def check_shapes(calls: Sequence[Call], why: str) -> RungResult:
    """Rung 1 with no schemas: only the arguments' shape is checked."""
    if not calls:
        return RungResult(NUMBER, NAME, "skipped", {}, explanation="no tool calls to check")
    bad = [
        (call, problem)
        for call in calls
        if not arguments_absent(call) and (problem := format_problem(call)) is not None
    ]
    if not bad:
        return RungResult(NUMBER, NAME, "not_evaluated", {}, explanation=f"not evaluated: {why}")
    checks = tuple(
        CallCheck(
            "invalid", actual_ordinal=c.ordinal, actual_tool=c.name, code="PARAM_WRONG_FORMAT", message=p
        )
        for c, p in bad
    )
    findings = tuple(
        Finding(NUMBER, "PARAM_WRONG_FORMAT", p, tool=c.name, actual=c.raw, ordinal=c.ordinal) for c, p in bad
    )
    explanation = "; ".join(p for _, p in bad) + f" (the other calls not evaluated: {why})"
    return RungResult(NUMBER, NAME, "fail", {}, checks, findings, explanation)


_VALID, _UNCHECKED, _FAILED = 0, 1, 2  # what one call counts as in rung 1's explanation
Outcome = tuple[int, CallCheck, tuple[Finding, ...], str]  # kind, check, findings, message


def _outcome(call: Call, code: str | None, message: str, errors: tuple[tuple[str, str, str], ...]) -> Outcome:
    """Rung 1's answer for one checked call: its kind, its check, its findings and its message."""
    if code is None:
        return _VALID, CallCheck("match", None, None, call.ordinal, call.name, None, (), message), (), message
    if code == NO_SCHEMA:
        check = CallCheck("not_evaluated", None, None, call.ordinal, call.name, None, (), message)
        return _UNCHECKED, check, (), message
    check = CallCheck("invalid", None, None, call.ordinal, call.name, code, (), message)
    if not errors:
        return (
            _FAILED,
            check,
            (Finding(NUMBER, code, message, tool=call.name, actual=call.raw, ordinal=call.ordinal),),
            message,
        )
    findings = tuple(
        Finding(
            NUMBER,
            kind,
            f"{call.name}: {msg}",
            call.name,
            param,
            actual=call.arguments.get(param) if param != "(arguments)" else call.arguments,
            ordinal=call.ordinal,
        )
        for param, msg, kind in errors
    )
    return _FAILED, check, findings, message


def check_calls(calls: Sequence[Call], registry: SchemaRegistry) -> RungResult:
    if not calls:
        return RungResult(NUMBER, NAME, "skipped", {}, explanation="no tool calls to check")
    checks: list[CallCheck] = []
    findings: list[Finding] = []
    # what the explanation counts, gathered in the one pass over the calls (the hot path)
    valid = 0
    unchecked: list[str] = []
    failed: list[str] = []
    uncheckable: str | None = None
    judge = registry._judge
    # A call's whole answer is a pure function of its name, argument text and position (as the
    # schema memo's is of the first two): kept per registry, so a call seen before at that
    # position costs one lookup. A call with no argument text, or one that could not be checked,
    # is answered afresh each time.
    outcomes = registry._outcomes
    for call in calls:
        raw = call.raw
        key = (call.name, raw, call.parsed, call.ordinal) if raw is not None else None
        hit = outcomes.get(key) if key is not None else None
        if hit is None:
            if raw is None and call.arguments is None:  # `arguments_absent`, inline
                message = _absent_message(call)
                hit = (
                    _UNCHECKED,
                    CallCheck("not_evaluated", None, None, call.ordinal, call.name, None, (), message),
                    (),
                    message,
                )
            else:
                try:
                    hit = _outcome(call, *judge(call))
                    if key is not None:
                        if len(outcomes) >= _MEMO_LIMIT:
                            outcomes.clear()
                        outcomes[key] = hit
                except Uncheckable as exc:  # a captured schema no one can check this call against: no verdict
                    shape = format_problem(call)
                    code, message = (
                        ("PARAM_WRONG_FORMAT", shape)
                        if shape
                        else (NO_SCHEMA, f"not evaluated: {call.name}: {exc}")
                    )
                    uncheckable = uncheckable or message
                    hit = _outcome(call, code, message, ())
        kind, check, found, message = hit
        checks.append(check)
        if kind == _VALID:
            valid += 1
        elif kind == _UNCHECKED:
            unchecked.append(message)
        else:
            failed.append(message)
            findings += found
    status: RungStatus = "fail" if failed else "not_evaluated" if unchecked else "pass"
    if status == "pass":
        explanation = f"{valid}/{len(checks)} calls schema-valid"
        if not registry.complete:
            explanation += " (against definitions seen only on tool spans: only tools that ran)"
    elif status == "fail":
        explanation = "; ".join(failed)
    elif uncheckable is not None and len(unchecked) == 1:
        explanation = uncheckable
    else:  # a call that could not be checked is never passed by default
        explanation = (
            f"not evaluated: {len(unchecked)} of {len(checks)} calls could not be checked: "
            + "; ".join(m.removeprefix("not evaluated: ") for m in dict.fromkeys(unchecked))
        )
    if status == "not_evaluated":
        return RungResult(NUMBER, NAME, status, {}, tuple(checks), (), explanation)
    return RungResult(
        NUMBER,
        NAME,
        status,
        {"valid_fraction": valid / len(checks)},
        tuple(checks),
        tuple(findings),
        explanation,
    )
