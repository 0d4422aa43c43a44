"""Recorded traces → suite cases, pure: whether a trace or a conversation can be a case (and why
not, in one line), the case it becomes, the tools its definitions give, and the results a replay
serves. `from_traces` reads the store and writes the domain; this module decides what goes in it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from traceladder.errors import UserError
from traceladder.evaluate.assemble import RawCall
from traceladder.evaluate.rungs.untrusted_schema import Uncheckable, schema_errors, schema_problem
from traceladder.workflows.domain_writer import SuiteCase, SuiteTurn

DIMENSION_OF = {0: "D1", 1: "D2"}  # 2 or more calls: D3
NOTES = {"D1": "when to call: the agent answered without a tool", "D2": "selection/fill: one call",
         "D3": "chain: {n} calls"}  # fmt: skip
_MIN_LINK = 3  # shorter values ("ok", 1) are too common to say one call used another's result


@dataclass(frozen=True)
class Recorded:
    """What one trace recorded, as the store's extraction read it."""

    trace_id: str
    instruction: str | None
    calls: tuple[RawCall, ...]
    definitions: list[tuple[str, str | None, str | None]] = field(default_factory=list)
    system_prompt: str | None = None
    service: str | None = None
    message: str | None = None  # the user's message this trace answers (a turn's own)
    conversation: str | None = None  # as the store grouped it (`conversations`)
    turn: int = 0


def conversations(recorded: Sequence[Recorded]) -> list[list[Recorded]]:
    """The selected traces as conversations: each conversation's selected turns in turn order, the
    conversations in the order of their first trace (a trace of no conversation is its own)."""
    groups: dict[str, list[Recorded]] = {}
    for trace in recorded:
        groups.setdefault(trace.conversation or trace.trace_id, []).append(trace)
    out: list[list[Recorded]] = []
    for group in groups.values():
        group.sort(key=lambda t: t.turn)
        said = [turn_text(t).strip().casefold() for t in group]
        if any(a == b for a, b in zip(said, said[1:], strict=False)):
            # No new user message: these are requests of one turn, each traced on its own (a loop
            # that traces request by request), not turns — each is read alone, as before.
            out += [[t] for t in group]
        else:
            out.append(group)
    return out


def turn_text(trace: Recorded) -> str:
    """A turn's user message: its own (the last its first request sent), else the first."""
    return trace.message or trace.instruction or ""


def unusable_group(group: Sequence[Recorded], validators: dict[str, Any], seen: dict[str, str]) -> str:
    """Why a conversation cannot be a case ("" when it can): one trace is judged as before; a
    conversation of several turns needs every turn's message and calls to be usable, and its
    first message to be unlike every earlier case's request."""
    if len(group) == 1:
        return _unusable(group[0], validators, seen)
    for index, trace in enumerate(group):
        as_turn = replace(trace, instruction=turn_text(trace))
        why = _unusable(as_turn, validators, seen if index == 0 else {})
        if why:
            return f"turn {index + 1} of conversation {trace.conversation} (trace {trace.trace_id}): {why}"
    return ""


def system_prompt(kept: Sequence[Recorded]) -> str | None:
    """The one system prompt of the traces that became cases (None when none records one). Two
    different ones are an error: a domain replays one prompt."""
    prompts = {t.system_prompt: t.trace_id for t in kept if t.system_prompt}
    if len(prompts) > 1:
        (_, first), (_, second) = list(prompts.items())[:2]
        raise UserError(
            f"the traces' system prompts differ (traces {first} and {second}); "
            "record one version's traces (--version, --where)"
        )
    prompt = next(iter(prompts), None)
    if prompt is not None and _surrogate(prompt):
        raise UserError(f"trace {prompts[prompt]}: its system prompt holds a lone surrogate (not UTF-8)")
    return prompt


def definition(name: str, description: str | None, schema: Any) -> dict[str, Any]:
    function: dict[str, Any] = {"name": name}
    if description:
        function["description"] = description
    function["parameters"] = schema
    return {"type": "function", "function": function}


def tools_of(recorded: Sequence[Recorded]) -> dict[str, dict[str, Any]]:
    """Tool name → its OpenAI definition, from what the traces captured. One tool defined two
    ways (a schema changed between deploys) is an error: a suite replays one version."""
    tools: dict[str, dict[str, Any]] = {}
    source: dict[str, str] = {}
    for trace in recorded:
        for name, description, parameters in trace.definitions:
            if parameters is None:
                continue  # a name without a schema defines nothing a call can be checked against
            try:
                schema = json.loads(parameters)
            except (ValueError, RecursionError):
                raise UserError(f"trace {trace.trace_id}: the definition of {name} is not JSON") from None
            problem = schema_problem(schema)
            if problem:  # a remote $ref is refused here, never fetched
                raise UserError(f"trace {trace.trace_id}: the definition of {name} {problem}")
            tool = definition(name, description, schema)
            if name in tools and tools[name]["function"]["parameters"] != schema:
                raise UserError(
                    f"tool {name} has two definitions (traces {source[name]} and {trace.trace_id}); "
                    "record one version's traces (--version)"
                )
            tools.setdefault(name, tool)
            source.setdefault(name, trace.trace_id)
    return tools


def _unusable(trace: Recorded, validators: dict[str, Any], seen: dict[str, str]) -> str:
    """Why a trace cannot be a case ("" when it can)."""
    if not (trace.instruction and trace.instruction.strip()):
        return (
            "no user request recorded (the instruction of the case) in its span attributes, span "
            "events or log records; select traces that record it (--trace, --where) or --skip-bad"
        )
    earlier = seen.get(trace.instruction.strip().casefold())
    if earlier:
        return f"the same user request as trace {earlier} (a suite's instructions are unique)"
    for tool, raw, _, _, ordinal in trace.calls:
        if tool not in validators:
            return (
                f"call {ordinal} uses {tool}, which no selected trace recorded a definition of; "
                "give its definition with --tools FILE"
            )
        arguments = _object(raw)
        if arguments is None:
            shown = (raw or "")[:80]
            return f"call {ordinal} {tool}: its arguments are not a JSON object ({shown!r})"
        try:
            found = schema_errors(validators[tool], arguments)
        except Uncheckable as exc:
            return f"call {ordinal} {tool}: its arguments cannot be checked against the definition: {exc}"
        errors = sorted(found, key=lambda e: [str(p) for p in e.absolute_path])
        if errors:
            return f"call {ordinal} {tool}: its arguments do not fit the definition: {errors[0].message}"
    return _unwritable(trace)


def _unwritable(trace: Recorded) -> str:
    """Why what the trace recorded cannot be written as strict UTF-8 JSON ("" when it can): a NaN
    or an infinity in the arguments (`NaN`, `1e999`: Python would write bare `NaN`/`Infinity`),
    or a lone surrogate (`"\\ud800"`, which UTF-8 cannot carry) anywhere the suite would hold it."""
    if _surrogate(trace.instruction or ""):
        return "its user request holds a lone surrogate (not UTF-8)"
    for tool, raw, _, result, ordinal in trace.calls:
        arguments = _object(raw) or {}
        if _non_finite(arguments):
            return f"call {ordinal} {tool}: its arguments hold NaN or an infinity, which JSON cannot carry"
        if _surrogate(json.dumps(arguments, ensure_ascii=False)) or _surrogate(result or ""):
            return f"call {ordinal} {tool}: its arguments or result hold a lone surrogate (not UTF-8)"
    return ""


def _surrogate(text: str) -> bool:
    return not text.isascii() and any(0xD800 <= ord(c) < 0xE000 for c in text)


def _non_finite(value: Any) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, dict):
        return any(_non_finite(v) for v in value.values())
    if isinstance(value, list):
        return any(_non_finite(v) for v in value)
    return False


def _object(raw: str | None) -> dict[str, Any] | None:
    try:
        value = json.loads(raw) if raw is not None and raw.strip() else {}
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def case_of(trace: Recorded) -> SuiteCase:
    calls = [(tool, _object(raw) or {}) for tool, raw, _, _, _ in trace.calls]
    dimension = DIMENSION_OF.get(len(calls), "D3")
    return SuiteCase(
        trace_id=trace.trace_id,
        dimension=dimension,
        instruction=trace.instruction or "",
        notes=f"recorded from trace {trace.trace_id}; {dimension} " + NOTES[dimension].format(n=len(calls)),
        calls=[_GoldenCall(tool, params) for tool, params in calls],
        order_sensitive=_dependent(trace),
    )


def conversation_case(group: Sequence[Recorded]) -> SuiteCase:
    """A conversation of several turns as one MultiTurnCaseV1 case: each turn's message and its
    own calls (a turn's trace holds only the calls made in it), ordering per turn."""
    turns = []
    for trace in group:
        message = turn_text(trace)
        calls = [_GoldenCall(tool, _object(raw) or {}) for tool, raw, _, _, _ in trace.calls]
        turns.append(SuiteTurn(message, calls, _dependent(replace(trace, instruction=message))))
    every = [c for t in turns for c in t.calls]
    dimension = DIMENSION_OF.get(len(every), "D3")
    traces = ", ".join(t.trace_id for t in group)
    return SuiteCase(
        trace_id=group[0].trace_id,
        dimension=dimension,
        instruction=turns[0].user,
        notes=f"recorded from conversation {group[0].conversation} ({len(group)} turns: traces {traces}); "
        f"{dimension} " + NOTES[dimension].format(n=len(every)),
        calls=every,
        order_sensitive=any(t.order_sensitive for t in turns),
        turns=turns,
    )


@dataclass(frozen=True)
class _GoldenCall:
    tool: str
    params: dict[str, Any]


def _dependent(trace: Recorded) -> bool:
    """Whether a call sends a value an earlier call's result returned and the request did not
    name: then the order is part of the behaviour (a confirmation carries its request's id)."""
    instruction = trace.instruction or ""
    results: list[str] = []
    for _, raw, _, result, _ in trace.calls:
        for value in _leaves(_object(raw) or {}):
            if len(value) >= _MIN_LINK and value not in instruction and any(value in r for r in results):
                return True
        if result:
            results.append(result)
    return False


def _leaves(value: Any) -> list[str]:
    """Every string and number in a value, as text."""
    if isinstance(value, dict):
        return [leaf for child in value.values() for leaf in _leaves(child)]
    if isinstance(value, list):
        return [leaf for child in value for leaf in _leaves(child)]
    if isinstance(value, bool) or value is None:
        return []
    return [value if isinstance(value, str) else json.dumps(value)]


def responses(recorded: Sequence[Recorded]) -> list[dict[str, Any]]:
    """Every recorded result, in trace order: a call polled three times (pending, pending, done) is
    three lines, and replay serves them in this order (the last repeats once they run out)."""
    lines: list[dict[str, Any]] = []
    for trace in recorded:
        for tool, raw, ok, result, _ in trace.calls:
            if result is None:
                continue  # the trace saw the call but not what it returned: nothing to replay
            arguments = _object(raw)
            line: dict[str, Any] = {"tool": tool}
            line.update({"arguments": arguments} if arguments is not None else {"arguments_raw": raw or ""})
            line.update({"result": result, "ok": ok, "trace": trace.trace_id})
            lines.append(line)
    return lines


def id_fields(cases: Sequence[SuiteCase]) -> set[str]:
    """Argument names ending in `_id` whose values are strings: fixture-backed, so a model that
    invents one the recording never saw gets PARAM_HALLUCINATED_ID. Curate in domain.toml."""
    names: set[str] = set()
    for case in cases:
        for call in case.calls:
            _collect_ids(call.params, names)
    return names


def _collect_ids(value: Any, names: set[str]) -> None:
    if isinstance(value, dict):
        for key, child in value.items():
            if key.endswith("_id") and isinstance(child, str):
                names.add(key)
            _collect_ids(child, names)
    elif isinstance(value, list):
        for item in value:
            _collect_ids(item, names)
