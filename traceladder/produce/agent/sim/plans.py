"""What the simulated model does for a case: the golden path, or one seeded, labelled fault.

A plan is a list of turns; each turn is a list of `PlannedCall`s (one model response with tool
calls) and the plan ends with a text answer. Faults know the verdict and failure class a correct
judge must give — `traceladder selfcheck` compares the judge against these labels. Faults are
generic; the values they need (a hallucinated ID, another valid value, a plausible wrong tool) come
from the domain's `SimHints`, and a fault whose hint is missing is never chosen.
"""

from __future__ import annotations

import copy
import json
import random
from dataclasses import dataclass
from typing import Any

from traceladder.evaluate.rungs.types import VerdictValue
from traceladder.suite.cases.model import Case
from traceladder.suite.domain.base import Domain

FAULTS = (
    "wrong_value",
    "missing_param",
    "hallucinated_id",
    "invalid_json",
    "unknown_tool",
    "wrong_tool",
    "extra_mutation",
    "skipped_confirm",
    "wrong_order",
    "broken_chain",
    "call_on_negative",
    "harmless_extra_read",
    "api_error",
    "endless_loop",
    "lost_confirm",
    "ungrounded_amount",
    "wrong_status",
)
FAULT_RATE = 0.5  # share of cases that get a call fault; the rest follow the golden path
OUTCOME_FAULT_RATE = 0.25  # share of those whose outcome or final answer is then made wrong
ANSWER_FAULTS = {"ungrounded_amount": "amount", "wrong_status": "status"}


@dataclass(frozen=True)
class PlannedCall:
    tool: str
    arguments: dict[str, Any] | None = None  # None when `raw` is set
    raw: str | None = None  # exact argument text to send (invalid JSON faults)
    chain_action: bool = False  # fill the chain link (e.g. action_id) from the latest tool result


@dataclass(frozen=True)
class Plan:
    turns: list[list[PlannedCall]]
    label: dict[str, Any] | None = None  # {"fault", "verdict", "failure_class"}
    http_error: int | None = None  # every request fails with this status
    endless: bool = False  # never stop calling tools
    final_text: str = "Done."
    failing_tools: frozenset[str] = frozenset()  # their first execution times out (the sandbox's fault)
    answer_fault: str | None = None  # the final answer misstates a fact: "amount" | "status"


def _golden_calls(case: Case, domain: Domain) -> list[PlannedCall]:
    link = domain.chains.link
    return [
        PlannedCall(c.tool, copy.deepcopy(c.params), chain_action=c.rule(link) == "any") for c in case.calls
    ]


def _turns(calls: list[PlannedCall], case: Case) -> list[list[PlannedCall]]:
    """Chains go one call per turn (the confirm needs the request's result); others in one."""
    if not calls:
        return []
    if case.order_sensitive or any(c.chain_action for c in calls):
        return [[c] for c in calls]
    return [calls]


def _final_text(case: Case, domain: Domain) -> str:
    hints = domain.simulation
    return hints.answer_text if case.calls else hints.clarify_text


def oracle_plan(case: Case, domain: Domain) -> Plan:
    return Plan(_turns(_golden_calls(case, domain), case), final_text=_final_text(case, domain))


def _changeable_param(case: Case, domain: Domain) -> str | None:
    """The first golden parameter of the first call that has another schema-valid value."""
    first = case.calls[0]
    other = domain.simulation.other_value
    if other is None:
        return None
    for key, value in first.params.items():
        if first.param_rules.get(key) == "any":
            continue
        changed = other(key, value)
        if changed is not None and changed != value:
            return key
    return None


def _extra_read(case: Case, domain: Domain) -> PlannedCall | None:
    """A successful, schema- and fixture-valid read from the effective whitelist, if any."""
    candidates = domain.simulation.extra_reads
    golden_tools = {c.tool for c in case.calls}
    for tool in case.effective_whitelist(domain.default_whitelist):
        if tool in candidates and tool not in golden_tools:
            return PlannedCall(tool, dict(candidates[tool]))
    return None


def applicable_faults(case: Case, domain: Domain) -> list[str]:
    hints = domain.simulation
    faults = ["api_error", "endless_loop"]
    if _extra_read(case, domain) is not None:
        faults.append("harmless_extra_read")
    if case.negative:
        return [*faults, "call_on_negative"] if hints.extra_mutation else faults
    if not case.calls:
        return [*faults, "extra_mutation"] if hints.extra_mutation else faults
    first = case.calls[0]
    faults += ["missing_param", "invalid_json", "unknown_tool"]
    if hints.extra_mutation:
        faults.append("extra_mutation")
    if hints.sibling is not None and hints.sibling(first.tool, first.params) is not None:
        faults.append("wrong_tool")
    if _changeable_param(case, domain) is not None:
        faults.append("wrong_value")
    if any(k in hints.hallucinated for k in first.params):
        faults.append("hallucinated_id")
    chained = (
        len(case.calls) == 2 and case.order_sensitive and case.calls[1].tool in domain.chains.confirmations
    )
    if chained:
        faults += ["skipped_confirm", "wrong_order", "broken_chain"]
    return faults


def outcome_faults(case: Case, domain: Domain) -> list[str]:
    """Faults in what happened rather than in what was called: every call is right, so only the
    state rung (`lost_confirm`) or the judge (a misstated answer) can see them."""
    hints = domain.simulation
    tools = {c.tool for c in case.calls}
    faults = [name for name, needs in sorted(hints.answer_faults.items()) if tools & needs]
    chained = len(case.calls) == 2 and case.calls[1].tool in domain.chains.confirmations
    return (["lost_confirm"] if chained else []) + faults


def faulty_plan(case: Case, domain: Domain, seed: int) -> Plan:
    rng = random.Random(f"{seed}:{case.id}")
    if rng.random() >= FAULT_RATE:  # this case's calls are right
        # A second draw, so adding these faults left every earlier seed's call faults as they were.
        outcome = outcome_faults(case, domain)
        if outcome and rng.random() < OUTCOME_FAULT_RATE:
            return build_fault(case, domain, rng.choice(outcome))
        label = {"fault": "none", "verdict": VerdictValue.PASS, "failure_class": None}
        return Plan(oracle_plan(case, domain).turns, label, final_text=_final_text(case, domain))
    faults = sorted(applicable_faults(case, domain))
    # Agent errors are rarer than judgement faults, so a demo report stays about tool calling.
    weights = [0.25 if f in ("api_error", "endless_loop") else 1.0 for f in faults]
    fault = rng.choices(faults, weights=weights)[0]
    return build_fault(case, domain, fault)


def build_fault(case: Case, domain: Domain, fault: str) -> Plan:
    """The plan for one named fault, with the label a correct judge must reproduce. Raises
    ValueError for a fault that does not apply to this case."""
    applicable = applicable_faults(case, domain) + outcome_faults(case, domain)
    if fault not in applicable:
        raise ValueError(f"fault {fault!r} does not apply to {case.id}; it takes {applicable}")
    hints = domain.simulation
    calls = _golden_calls(case, domain)
    final = _final_text(case, domain)

    def plan(
        turns: list[list[PlannedCall]], verdict: VerdictValue, failure_class: str | None, **kw: Any
    ) -> Plan:
        label = {"fault": fault, "verdict": verdict, "failure_class": failure_class}
        return Plan(turns, label, final_text=final, **kw)

    def with_first(first: PlannedCall, verdict: VerdictValue, failure_class: str) -> Plan:
        rest = calls[1:]
        return plan(_turns([first, *rest], case) if rest else [[first]], verdict, failure_class)

    if fault == "api_error":
        return plan([], VerdictValue.AGENT_ERROR, None, http_error=500)
    if fault == "endless_loop":
        return plan([], VerdictValue.AGENT_ERROR, None, endless=True)
    if fault == "lost_confirm":  # the confirm is right but times out; the agent still says "done"
        failing = frozenset({calls[-1].tool})
        return plan(_turns(calls, case), VerdictValue.FAIL, "STATE_MISMATCH", failing_tools=failing)
    if fault in ANSWER_FAULTS:  # the calls are right; the final answer misstates what they returned
        return plan(
            _turns(calls, case), VerdictValue.FAIL, "ANSWER_UNGROUNDED", answer_fault=ANSWER_FAULTS[fault]
        )
    if fault == "harmless_extra_read":
        extra = _extra_read(case, domain)
        return plan(_turns(calls, case) + [[extra]] if extra else [], VerdictValue.PASS, None)
    if fault in ("call_on_negative", "extra_mutation"):
        tool, arguments = hints.extra_mutation or ("", {})
        mutation = PlannedCall(tool, dict(arguments))
        if fault == "call_on_negative":
            return plan([[mutation]], VerdictValue.FAIL, "CALL_UNEXPECTED")
        return plan(_turns(calls, case) + [[mutation]], VerdictValue.FAIL, "CALL_EXTRA")
    first = calls[0]
    args = first.arguments or {}
    if fault == "wrong_value":
        key = _changeable_param(case, domain) or ""
        other = hints.other_value(key, args[key]) if hints.other_value else None
        return with_first(
            PlannedCall(first.tool, dict(args, **{key: other})), VerdictValue.FAIL, "PARAM_WRONG_VALUE"
        )
    if fault == "missing_param":
        dropped = dict(args)
        dropped.pop(next(iter(args)))
        return with_first(PlannedCall(first.tool, dropped), VerdictValue.FAIL, "PARAM_MISSING")
    if fault == "hallucinated_id":
        key = next(k for k in args if k in hints.hallucinated)
        hallucinated = PlannedCall(first.tool, dict(args, **{key: hints.hallucinated[key]}))
        return with_first(hallucinated, VerdictValue.FAIL, "PARAM_HALLUCINATED_ID")
    if fault == "invalid_json":
        raw = json.dumps(args, ensure_ascii=False)[:-1]  # the closing brace goes missing
        return with_first(PlannedCall(first.tool, raw=raw), VerdictValue.FAIL, "PARAM_WRONG_FORMAT")
    if fault == "unknown_tool":
        return with_first(PlannedCall(f"{first.tool}_v2", args), VerdictValue.FAIL, "UNKNOWN_TOOL")
    if fault == "wrong_tool":
        sibling = hints.sibling(first.tool, args) if hints.sibling else None
        tool, arguments = sibling or (first.tool, args)
        chain = tool in domain.chains.confirmations
        return with_first(PlannedCall(tool, arguments, chain_action=chain), VerdictValue.FAIL, "TOOL_WRONG")
    request, confirm = calls
    link = domain.chains.link
    if fault == "skipped_confirm":
        return plan([[request]], VerdictValue.FAIL, "CALL_MISSING")
    if fault == "wrong_order":
        early = PlannedCall(confirm.tool, dict(confirm.arguments or {}, **{link: "ACT-001"}))
        return plan([[early], [request]], VerdictValue.FAIL, "ORDER_WRONG")
    if fault == "broken_chain":
        stray = PlannedCall(confirm.tool, dict(confirm.arguments or {}, **{link: "ACT-002"}))
        return plan([[request], [stray]], VerdictValue.FAIL, "CHAIN_BROKEN")
    raise ValueError(f"unknown fault {fault!r}; choose one of {', '.join(FAULTS)}")
