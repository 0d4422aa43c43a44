"""Rung 1 — invariants: the open-path checks for a live trace, one that has no expected path.

Needs an invariant policy (`Policy`, chosen for the trace's service and agent by `PolicySet`).
Every check the policy enables runs; one it leaves unset costs nothing. One finding per violation:

  FORBIDDEN_TOOL       a call to a tool matching a `forbidden_tools` glob (expected: the glob)
  TOOL_NOT_ALLOWED     a call to a tool matching no `allowed_tools` glob (expected: the globs);
                       a forbidden tool is reported as FORBIDDEN_TOOL only
  TOO_MANY_TURNS       more model turns than `max_turns` (expected: the limit, actual: the count)
  TOO_MANY_TOOL_CALLS  more calls than `max_tool_calls`; ordinal: the first call over the limit
  TOOL_ERRORS          more failed calls (ok=False) than `max_tool_errors`, counted over the whole
                       trace, not per tool; ordinal: the first failure over the limit, tool: set
                       only when every failure was the same tool
  DUPLICATE_CALL       the same tool with the same arguments as an earlier call (expected: the
                       earlier call's ordinal, actual: the arguments). Parsed arguments compare as
                       canonical JSON (key order does not matter; 1, 1.0 and true stay distinct);
                       arguments that did not parse compare by their raw text
  UNCONFIRMED_ACTION   a call to a `confirm` rule's tool with no call to one of its `by` tools
                       later in the trace (a confirmation *before* the request does not count; one
                       confirmation settles every earlier request of its rule; a confirming call
                       counts whether or not it succeeded — failures are TOOL_ERRORS' business)
  PARAM_PATTERN        a parameter that does not match its regex in full (`re.fullmatch`; expected:
                       the regex, actual: the value). Strings match as they are; any other value
                       matches on its JSON text (`5`, `true`, `null`, `{"a":1}`). A missing
                       parameter, or arguments that are not an object, are the schema rung's business
  SLOW_TRACE           a trace duration above `max_latency_ms`. Unknown duration (no root span,
                       clock skew) skips the check and says so in the explanation

Pure and total: any calls, any arguments, never an exception.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any, TypeGuard

import orjson

from traceladder.evaluate.rungs.inputs import TraceInputs
from traceladder.evaluate.rungs.policy import ParamRule, Policy
from traceladder.evaluate.rungs.safe_regex import full_match
from traceladder.evaluate.rungs.types import Call, Finding, RungResult
from traceladder.trace_facts import TraceFacts

NUMBER = 1
NAME = "invariants"
NEEDS = frozenset({"policy"})
SURVIVORS_ONLY = False

_SHOWN = 5  # violations spelled out in the explanation; the findings hold them all
_VALUE_CHARS = 80  # how much of an offending value a message quotes
_UNSEEN = object()


def evaluate(inputs: TraceInputs, analysis: Any = None) -> RungResult:
    policy = inputs.policy
    if not isinstance(policy, Policy):
        why = f"the policy is a {type(policy).__name__}, not an invariants Policy"
        return RungResult(NUMBER, NAME, "not_evaluated", explanation=f"not evaluated: {why}")
    calls = inputs.calls if isinstance(inputs.calls, tuple | list) else tuple(inputs.calls or ())
    return check(calls, inputs.facts, policy)


def check(calls: Sequence[Call], facts: TraceFacts, policy: Policy) -> RungResult:
    """Every check `policy` enables, over one trace's calls and facts."""
    found: list[tuple[int, Finding]] = []  # (position in the trace, finding): sorted at the end
    checked = len(policy.checks)
    notes: list[str] = []
    if (
        policy.allowed_tools is not None or policy.forbidden_tools or policy.confirm
        or policy.parameters or policy.forbid_duplicate_calls or policy.max_tool_errors is not None
    ):  # fmt: skip
        _per_call(calls, policy, found)
    n = len(calls)
    limit = policy.max_tool_calls
    if limit is not None and n > limit:
        first = calls[limit]
        message = f"{n} tool calls, more than max_tool_calls {limit} (from call {first.ordinal})"
        found.append((limit, Finding(NUMBER, "TOO_MANY_TOOL_CALLS", message, None, None, limit, n,
                                     first.ordinal)))  # fmt: skip
    limit = policy.max_turns
    turns = getattr(facts, "model_turns", None)
    if limit is not None and _number(turns) and turns > limit:
        message = f"{turns} model turns, more than max_turns {limit}"
        found.append((n, Finding(NUMBER, "TOO_MANY_TURNS", message, expected=limit, actual=turns)))
    latency = policy.max_latency_ms
    duration = getattr(facts, "duration_ms", None)
    if latency is not None:
        if not _number(duration) or duration != duration:  # None, or NaN
            checked -= 1
            notes.append("max_latency_ms not checked: the trace's duration is unknown")
        elif duration > latency:
            message = f"trace took {duration:.0f} ms, more than max_latency_ms {latency:g}"
            found.append((n, Finding(NUMBER, "SLOW_TRACE", message, expected=latency, actual=duration)))
    return _result(found, checked, notes, policy)


def _per_call(calls: Sequence[Call], policy: Policy, found: list[tuple[int, Finding]]) -> None:
    """The checks that look at each call, in one pass."""
    duplicates = policy.forbid_duplicate_calls
    count_errors = policy.max_tool_errors is not None
    seen: dict[tuple[str, str | bytes], Any] = {}
    pending: list[list[tuple[int, Call, str, str | None]]] = [[] for _ in policy.confirm]
    last_confirmer: list[str | None] = [None] * len(policy.confirm)
    failed: list[tuple[int, Call, str]] = []
    for position, call in enumerate(calls):
        name = call.name if isinstance(call.name, str) else str(call.name)
        ordinal = call.ordinal
        rules = policy.rules_for(name)
        if rules.forbidden is not None:
            message = f"forbidden tool {name} (call {ordinal}) matches {rules.forbidden!r}"
            found.append((position, Finding(NUMBER, "FORBIDDEN_TOOL", message, name, None,
                                            rules.forbidden, name, ordinal)))  # fmt: skip
        elif not rules.allowed:
            message = f"tool {name} (call {ordinal}) matches no allowed_tools glob"
            found.append((position, Finding(NUMBER, "TOOL_NOT_ALLOWED", message, name, None,
                                            list(policy.allowed_tools or ()), name, ordinal)))  # fmt: skip
        for index in rules.confirms:  # before the requests: a call never confirms itself
            pending[index].clear()
            last_confirmer[index] = f"{name} at call {ordinal}"
        for index in rules.requests:
            pending[index].append((position, call, name, last_confirmer[index]))
        if rules.params and isinstance(call.arguments, dict):
            for param_rule in rules.params:
                if param_rule.param in call.arguments:
                    finding = _param(call, name, param_rule)
                    if finding is not None:
                        found.append((position, finding))
        if duplicates:
            key = _canonical(call)
            if key is not None:
                earlier = seen.get((name, key), _UNSEEN)
                if earlier is _UNSEEN:
                    seen[name, key] = ordinal
                else:
                    message = f"duplicate call {name} (call {ordinal} repeats call {earlier})"
                    found.append((position, Finding(NUMBER, "DUPLICATE_CALL", message, name, None,
                                                    earlier, _evidence(call), ordinal)))  # fmt: skip
        if count_errors and not call.ok:
            failed.append((position, call, name))
    for index, rule in enumerate(policy.confirm):
        for position, call, name, before in pending[index]:
            wanted = " or ".join(rule.by)
            message = f"{name} (call {call.ordinal}) is not followed by a call to {wanted}"
            if before is not None:
                message += f" (the {before} came before it)"
            found.append((position, Finding(NUMBER, "UNCONFIRMED_ACTION", message, name, None,
                                            list(rule.by), None, call.ordinal)))  # fmt: skip
    limit = policy.max_tool_errors
    if limit is not None and len(failed) > limit:
        position, call, _ = failed[limit]
        tools = Counter(name for _, _, name in failed)
        counts = ", ".join(f"{tool} ×{count}" for tool, count in tools.most_common())
        message = f"{len(failed)} failed tool calls, more than max_tool_errors {limit} ({counts})"
        only = next(iter(tools)) if len(tools) == 1 else None
        found.append((position, Finding(NUMBER, "TOOL_ERRORS", message, only, None, limit, len(failed),
                                        call.ordinal)))  # fmt: skip


def _param(call: Call, name: str, rule: ParamRule) -> Finding | None:
    param, pattern = rule.param, rule.pattern.pattern
    value = call.arguments[param]
    text = value if isinstance(value, str) else _json_text(value)
    if full_match(rule.pattern.pattern, text):  # RE2: a policy's pattern never backtracks
        return None
    shown = text if len(text) <= _VALUE_CHARS else text[:_VALUE_CHARS] + "…"
    message = f"{name}.{param} (call {call.ordinal}) is {shown!r}, which does not match {pattern!r}"
    return Finding(NUMBER, "PARAM_PATTERN", message, name, param, pattern, value, call.ordinal)


def _json_text(value: Any) -> str:
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    except Exception:  # not JSON (a garbage value): its Python text
        return _repr(value)


def _canonical(call: Call) -> str | bytes | None:
    """The arguments of a call as comparable text; None when they cannot be compared at all.

    orjson first (~15× faster than `json`), except when its output holds `null`: orjson writes
    None, NaN and ±inf all as `null`, so those go to `json`, which tells them apart. A value
    always takes the same branch, and the branches give different types (bytes, str), so two
    keys are equal exactly when the arguments are. Unparsed arguments compare by raw text.
    """
    if not call.parsed:
        raw = call.raw
        return "raw:" + (raw if isinstance(raw, str) else _repr(raw))
    try:
        text = orjson.dumps(call.arguments, option=orjson.OPT_SORT_KEYS)
        if b"null" not in text:
            return text
    except Exception:  # big integers, non-string keys, deep nesting: the general encoder decides
        pass
    try:
        return json.dumps(call.arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    except Exception:  # not JSON at all: never called a duplicate
        return None


def _evidence(call: Call) -> Any:
    return call.arguments if call.parsed else call.raw


def _repr(value: Any) -> str:
    try:
        return repr(value)
    except Exception:  # a value whose repr fails (or recurses too deep)
        return f"<{type(value).__name__}>"


def _number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _result(found: list[tuple[int, Finding]], checked: int, notes: list[str], policy: Policy) -> RungResult:
    found.sort(key=lambda item: item[0])
    findings = tuple(f for _, f in found)
    scores = {"violations": float(len(findings)), "checked": float(checked)}
    noted = "".join(f"; {note}" for note in notes)
    if checked <= 0:
        why = "the policy enables no check" if not notes else notes[0]
        return RungResult(NUMBER, NAME, "not_evaluated", scores,
                          explanation=f"not evaluated: {why} ({policy.source or 'policy'})")  # fmt: skip
    if not findings:
        held = f"{checked} invariant{'s' if checked != 1 else ''} held"
        source = f" ({policy.source})" if policy.source else ""
        return RungResult(NUMBER, NAME, "pass", scores, explanation=f"{held}{source}{noted}")
    shown = "; ".join(f.message for f in findings[:_SHOWN])
    more = f"; and {len(findings) - _SHOWN} more" if len(findings) > _SHOWN else ""
    count = f"{len(findings)} violation{'s' if len(findings) != 1 else ''}"
    return RungResult(
        NUMBER, NAME, "fail", scores, findings=findings, explanation=f"{count}: {shown}{more}{noted}"
    )
