"""Assembling each trace's inputs: its calls, and — when they exist — its case, tool schemas and
domain rules. Everything here is picklable data, so worker processes can do the same.

Which schemas judge a trace: a case-tagged trace uses its domain's (recorded with the run, named
on the trace, or the default); a trace with no case uses the domain named with `--domain`, and
none otherwise — rung 1 is then `not_evaluated` with the reason, never passed by default.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from dataclasses import fields as dataclass_fields
from pathlib import Path
from typing import Any

import pyarrow as pa

from traceladder.evaluate.rungs.inputs import DomainRules, TraceInputs
from traceladder.evaluate.rungs.judge import Judgment
from traceladder.evaluate.rungs.ladder import Ladder
from traceladder.evaluate.rungs.policy import PolicySet
from traceladder.evaluate.rungs.schema import SchemaRegistry
from traceladder.evaluate.rungs.state import StateEvidence
from traceladder.evaluate.rungs.types import Call
from traceladder.evaluate.state_inputs import golden_states, state_evidence
from traceladder.evaluate.trace_schemas import Definitions, trace_registry
from traceladder.instrumentation.semconv import USER_MODEL_ERROR
from traceladder.sampling import EVERYTHING, Sampling
from traceladder.store.readers import UnitRow
from traceladder.suite.cases.loader import load_cases
from traceladder.suite.cases.model import Case, turn_key
from traceladder.suite.domain.registry import DEFAULT_DOMAIN, load_domain


@dataclass(frozen=True)
class DomainContext:
    """One domain, compiled once: its rules, schemas, cases and dimension order."""

    name: str
    rules: DomainRules
    tools: SchemaRegistry
    cases: Mapping[str, Case]
    dimensions: tuple[str, ...]
    states: Mapping[str, StateEvidence] = field(default_factory=dict)  # case id → golden end state
    judge_policy: str | None = None  # the policy text the judge holds answers to


@dataclass(frozen=True)
class LiveOptions:
    """The open-path inputs a user names for traces with no case, and the sampling rule."""

    tools: SchemaRegistry | None = None  # `--tools FILE`
    policies: PolicySet | None = None  # `--policy FILE`
    sampling: Sampling = EVERYTHING


NO_LIVE_OPTIONS = LiveOptions()


@dataclass(frozen=True)
class Context:
    """Everything judging needs besides the traces; built once per evaluation, sent once to each
    worker process."""

    ladder: Ladder
    domains: Mapping[str, DomainContext]
    default_domain: str = DEFAULT_DOMAIN  # for case-tagged traces that name no domain
    untagged_domain: str | None = None  # schemas for traces with no case (`--domain`)
    unknown: Mapping[str, str] = field(default_factory=dict)  # domain name → why it did not load
    tools_file: SchemaRegistry | None = None  # `--tools`: schemas for traces that captured none
    policies: PolicySet | None = None  # `--policy`: invariants, selected per service / agent
    sampling: Sampling = EVERYTHING  # which traces are judged, and what each stands for
    definition_sets: Mapping[str, Definitions] = field(default_factory=dict)  # digest → captured tools
    judgments: Mapping[str, Judgment] = field(default_factory=dict)  # trace → rung 5's judgment
    judge_absent: Mapping[str, str] = field(default_factory=dict)  # trace → why it has none
    judge_configured: bool = False
    judge_tag: str = ""  # appended to the recorded evaluator version: which judge and rubric decided rung 5


def build_context(
    units: Sequence[UnitRow],
    ladder: Ladder,
    *,
    domain: str | None = None,
    cases_path: Path | None = None,
    tools_file: SchemaRegistry | None = None,
    policies: PolicySet | None = None,
    sampling: Sampling = EVERYTHING,
    definition_sets: Mapping[str, Definitions] | None = None,
    named: Iterable[str] = (),
    cases: Sequence[Case] | None = None,
) -> Context:
    """Load every domain the units need (and those in `named`: the domains units not at hand
    name). `domain` names the default for case-tagged traces that name none, and the schemas for
    traces without a case; `cases_path` replaces the default domain's shipped suite; `cases` are
    the default domain's cases already read and validated (a run's own suite: not read again)."""
    default = domain or DEFAULT_DOMAIN
    names = {u.domain for u in units if u.domain} | set(named) | {default}
    domains: dict[str, DomainContext] = {}
    for name in sorted(names):
        d = load_domain(name)
        if name == default and cases is not None:
            suite: Sequence[Case] = cases
        else:
            suite = load_cases(d, cases_path if name == default else None) if d.suite or cases_path else ()
        dimensions = tuple(d.suite.dimensions) if d.suite else ()
        tools = SchemaRegistry(d.tool_schemas, f"domain:{d.name}", trusted=d.trusted)
        domains[name] = DomainContext(
            name,
            DomainRules.of(d),
            tools,
            {c.id: c for c in suite},
            dimensions,
            golden_states(suite, d),
            d.judge_policy,
        )
    return Context(
        ladder,
        domains,
        default,
        domain,
        tools_file=tools_file,
        policies=policies,
        sampling=sampling,
        definition_sets=definition_sets or {},
    )


def inputs_for(unit: UnitRow, calls: tuple[Call, ...], ctx: Context) -> TraceInputs:
    tagged = unit.case_id is not None
    name = unit.domain or (ctx.default_domain if tagged else ctx.untagged_domain)
    d = ctx.domains.get(name) if name else None
    absent: dict[str, str] = {}
    case = None
    if tagged:
        case = d.cases.get(unit.case_id) if d and unit.case_id else None
        if case is None:
            absent["case"] = f"case {unit.case_id} is not in the {name} suite"
        elif case.multi_turn:
            case = _turn_of(case, unit, absent)
        elif case.goal is not None:
            absent["case"] = (
                f"case {case.id} gives a user goal: its turns have no golden calls of their own "
                "(the conversation is judged against the goal)"
            )
            case = None
    unread = unit.unread
    agent_error = (unit.error_type or "agent error") if tagged and unit.agent_status == "error" else None
    if tagged and unit.error_type == USER_MODEL_ERROR:
        # the simulated user failed, not the agent: nothing of this turn is judged (case_turns
        # says how the user model failed)
        agent_error, unread = None, unread or "the simulated user failed in this turn (user_model_error)"
    tools = d.tools if d and tagged else None
    if not tagged:
        tools = _untagged_tools(unit, ctx, d, absent)
    policy = None
    if ctx.policies is not None:
        policy = ctx.policies.select(unit.facts.service, unit.facts.agent)
        if policy is None:
            absent["policy"] = f"the policy has no section for service {unit.facts.service!r}" + (
                f" or agent {unit.facts.agent!r}" if unit.facts.agent else ""
            )
    key = turn_key(case.id, unit.turn) if case else None
    state = state_evidence(case, unit.ledger, d.states, absent, key) if d else None
    judgment = ctx.judgments.get(unit.trace_id)
    if judgment is None and ctx.judge_configured:
        absent["judge"] = ctx.judge_absent.get(unit.trace_id, "not a survivor of the code rungs")
    return TraceInputs(
        unit.trace_id, calls, case, tools, d.rules if d else None, policy=policy, judge=judgment, state=state,
        agent_error=agent_error, facts=unit.facts, absent=absent, unread=unread,
    )  # fmt: skip


def _turn_of(case: Case, unit: UnitRow, absent: dict[str, str]) -> Case | None:
    """The turn of a multi-turn case a trace played, as the single-turn case it is judged as; a
    trace that names no turn (or one the case does not have) is not judged against the whole
    conversation's calls — that verdict would be wrong either way."""
    if unit.turn is None:
        absent["case"] = (
            f"case {case.id} is a multi-turn case and the trace names no turn of it: a trace is not "
            "judged against all its turns"
        )
        return None
    if not 0 <= unit.turn < len(case.turns):
        absent["case"] = f"case {case.id} has {len(case.turns)} turns; the trace names turn {unit.turn + 1}"
        return None
    return case.turn_case(unit.turn)


def facts_key(unit: UnitRow, ctx: Context) -> Any:
    """What of a trace's facts its verdict can depend on — nothing without a policy; with one, the
    policy that applies and only the facts its checks read (a duration within the limit is just
    "within": judging stays shared between traces that differ only in their timings)."""
    if ctx.policies is None:
        return None
    facts = unit.facts
    policy = ctx.policies.select(facts.service, facts.agent)
    if policy is None:
        return (facts.service, facts.agent)  # named in the not_evaluated reason
    turns = facts.model_turns if policy.max_turns is not None else None
    duration: Any = None
    if policy.max_latency_ms is not None:
        within = facts.duration_ms is not None and facts.duration_ms <= policy.max_latency_ms
        duration = "within" if within else facts.duration_ms
    return (id(policy), turns, duration)


# What each rung input of `TraceInputs` is made of, as a hashable part of the dedupe key: traces
# whose parts agree for every input the ladder reads get one verdict (`pool.settle_batch`). Each
# part holds exactly what `inputs_for` builds that input from; the two change together, and a test
# fails when an input has no part here.
KeyPart = Callable[[UnitRow, Context], Hashable]
INPUT_KEYS: Mapping[str, KeyPart] = {
    "case": lambda u, c: (u.domain, u.case_id, u.turn),
    "agent_error": lambda u, c: (u.case_id is not None, u.agent_status, u.error_type),
    "tools": lambda u, c: (u.domain, u.case_id is not None, u.definitions),
    "rules": lambda u, c: (u.domain, u.case_id is not None),
    "policy": facts_key,
    "facts": facts_key,  # read only by the policy's checks: what of them can matter
    "judge": lambda u, c: (c.judgments.get(u.trace_id), c.judge_absent.get(u.trace_id)),
    "state": lambda u, c: (u.domain, u.case_id, u.turn, u.ledger),
    "unread": lambda u, c: (u.unread, u.case_id is not None and u.error_type == USER_MODEL_ERROR),
}
# Read whatever the rungs declare: the fold (a skipped case, an agent error, calls not all read)
# and rung 1 (schemas and rules when there are any), which needs none of them to run.
ALWAYS_READ = frozenset({"case", "agent_error", "tools", "rules", "unread"})
# Fields of `TraceInputs` that are not inputs: the trace's identity, its calls (the key's first
# part, as recorded) and the reasons derived from the inputs above.
NOT_INPUTS = frozenset({"trace_id", "calls", "absent"})


def dedupe_parts(ladder: Ladder) -> tuple[KeyPart, ...]:
    """The key parts a ladder's verdicts depend on: those of every input some rung `NEEDS`, and
    of those read by every ladder. A need that is not a `TraceInputs` field is never present (the
    rung is `not_evaluated` for every trace alike), so it adds nothing."""
    fields = {f.name for f in dataclass_fields(TraceInputs)} - NOT_INPUTS
    needed = ALWAYS_READ.union(*(rung.NEEDS for rung in ladder.rungs)) & fields
    missing = sorted(needed - set(INPUT_KEYS))
    if missing:
        raise ValueError(f"rung input(s) {', '.join(missing)} have no part in the dedupe key (INPUT_KEYS)")
    return tuple(INPUT_KEYS[name] for name in sorted(needed))


def dedupe_key(unit: UnitRow, recorded: Hashable, ctx: Context, parts: Sequence[KeyPart]) -> tuple[Any, ...]:
    """Equal for two traces exactly when the ladder gives them one verdict: the calls as recorded
    (names, arguments, statuses, results, order) and the part of every input it reads."""
    return (recorded, *[part(unit, ctx) for part in parts])


def _untagged_tools(
    unit: UnitRow, ctx: Context, d: DomainContext | None, absent: dict[str, str]
) -> SchemaRegistry | None:
    """A trace with no case is judged against the definitions it captured; when it captured none
    (or none with a schema), against `--tools`, else `--domain`."""
    key = unit.definitions
    definitions = ctx.definition_sets.get(key) if key else None
    # definitions with no schema at all (names and descriptions only) cannot check a call: the
    # trace is judged as one that captured none, against `--tools` or `--domain` when given
    if definitions and all(parameters is None for _, parameters, _ in definitions):
        fallback = ctx.tools_file or (d.tools if d else None)
        if fallback is not None:
            return fallback
    if key and definitions:
        registry = trace_registry(key, definitions)
        if isinstance(registry, str):
            absent["tools"] = registry
            return None
        return registry
    return ctx.tools_file or (d.tools if d else None)


RawCall = tuple[str, str | None, bool, str | None, int]  # (tool, raw arguments, ok, raw result, ordinal)


def raw_calls_by_trace(table: pa.Table) -> dict[str, tuple[RawCall, ...]]:
    """Tool-call rows (trace_id, ordinal, tool_name, arguments_raw, status, result) → per trace,
    the calls as recorded: cheap to build, and exactly what judging a trace depends on."""
    out: dict[str, list[RawCall]] = {}
    cols = [table.column(i).to_pylist() for i in range(table.num_columns)]
    for trace_id, ordinal, tool, raw, status, result in zip(*cols, strict=True):
        out.setdefault(trace_id, []).append((tool, raw, status == "ok", result, ordinal))
    return {trace: tuple(calls) for trace, calls in out.items()}


class CallParser:
    """Raw calls → `Call`s, each distinct JSON text decoded once. Results are parsed only for
    chain requests (`requests`), the one place a code rung reads a result; the raw text stays on
    every call."""

    def __init__(self, requests: frozenset[str] = frozenset()) -> None:
        self.requests = requests
        self._decoded: dict[str, tuple[Any, bool]] = {}

    def _parse(self, raw: str | None) -> tuple[Any, bool]:
        if raw is None:
            return None, True
        hit = self._decoded.get(raw)
        if hit is None:
            try:
                hit = (json.loads(raw), True)
            except (ValueError, RecursionError):  # RecursionError: nested too deeply to decode
                hit = (None, False)
            if len(self._decoded) > 200_000:
                self._decoded.clear()
            self._decoded[raw] = hit
        return hit

    def calls(self, raw_calls: tuple[RawCall, ...]) -> tuple[Call, ...]:
        out = []
        for tool, raw, ok, result, ordinal in raw_calls:
            arguments, parsed = self._parse(raw)
            value = self._parse(result)[0] if tool in self.requests else None
            out.append(Call(tool, arguments, raw, ok, value, ordinal, parsed, result))
        return tuple(out)
