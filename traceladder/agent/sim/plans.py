"""What the simulated model does for a case: the golden path, or one seeded, labelled fault.

A plan is a list of turns; each turn is a list of `PlannedCall`s (one model response with tool
calls) and the plan ends with a text answer. Faults know the verdict and failure class a correct
judge must give — `traceladder selfcheck` compares the judge against these labels.
"""

from __future__ import annotations

import copy
import json
import random
from dataclasses import dataclass, field
from typing import Any

from traceladder.cases.model import Case
from traceladder.domain.base import Domain

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
)
FAULT_RATE = 0.5  # share of cases that get a fault; the rest follow the golden path
HALLUCINATED = {"user_id": "U199", "order_id": "W499", "product_id": "P299", "item_id": "I2999"}
ENUM_SWAP = {
    "reason": {
        "changed_mind": "found_cheaper",
        "ordered_by_mistake": "changed_mind",
        "other": "changed_mind",
        "damaged": "no_longer_needed",
        "not_as_described": "wrong_item",
        "wrong_size": "wrong_color",
        "wrong_color": "wrong_size",
        "overcharged": "other",
        "not_received": "other",
    },
    "status": {"delivered": "shipped"},
}
EXTRA_MUTATION = ("request_cancel", {"order_id": "W442", "reason": "other"})


@dataclass(frozen=True)
class PlannedCall:
    tool: str
    arguments: dict[str, Any] | None = None  # None when `raw` is set
    raw: str | None = None  # exact argument text to send (invalid JSON faults)
    chain_action: bool = False  # fill action_id from the latest tool result at send time


@dataclass(frozen=True)
class Plan:
    turns: list[list[PlannedCall]]
    label: dict[str, Any] | None = None  # {"fault", "verdict", "failure_class"}
    http_error: int | None = None  # every request fails with this status
    endless: bool = False  # never stop calling tools
    final_text: str = "好的，已为您处理。"
    extra: dict[str, Any] = field(default_factory=dict)


def _golden_calls(case: Case) -> list[PlannedCall]:
    return [
        PlannedCall(c.tool, copy.deepcopy(c.params), chain_action=c.rule("action_id") == "any")
        for c in case.calls
    ]


def _turns(calls: list[PlannedCall], case: Case) -> list[list[PlannedCall]]:
    """Chains go one call per turn (the confirm needs the request's result); others in one."""
    if not calls:
        return []
    if case.order_sensitive or any(c.chain_action for c in calls):
        return [[c] for c in calls]
    return [calls]


def oracle_plan(case: Case) -> Plan:
    return Plan(_turns(_golden_calls(case), case), final_text=_final_text(case))


def _final_text(case: Case) -> str:
    if not case.calls:
        return "您好，请提供订单号或更多信息，我再为您处理。"
    return "好的，已为您处理。"


def applicable_faults(case: Case, domain: Domain) -> list[str]:
    faults = ["api_error", "endless_loop"]
    whitelist = case.effective_whitelist(domain.default_whitelist)
    if whitelist and _extra_read(case, domain) is not None:
        faults.append("harmless_extra_read")
    if case.negative:
        return [*faults, "call_on_negative"]
    if not case.calls:
        return [*faults, "extra_mutation"]
    first = case.calls[0]
    faults += ["missing_param", "invalid_json", "unknown_tool", "wrong_tool", "extra_mutation"]
    if _changeable_param(first.params, first.param_rules) is not None:
        faults.append("wrong_value")
    if any(k in HALLUCINATED for k in first.params):
        faults.append("hallucinated_id")
    if len(case.calls) == 2 and case.order_sensitive:
        faults += ["skipped_confirm", "wrong_order", "broken_chain"]
    return faults


def faulty_plan(case: Case, domain: Domain, seed: int) -> Plan:
    rng = random.Random(f"{seed}:{case.id}")
    if rng.random() >= FAULT_RATE:  # this case is answered correctly
        return Plan(oracle_plan(case).turns, {"fault": "none", "verdict": "PASS", "failure_class": None},
                    final_text=_final_text(case))  # fmt: skip
    faults = sorted(applicable_faults(case, domain))
    # Agent errors are rarer than judgement faults, so a demo report stays about tool calling.
    weights = [0.25 if f in ("api_error", "endless_loop") else 1.0 for f in faults]
    fault = rng.choices(faults, weights=weights)[0]
    return build_fault(case, domain, fault)


def build_fault(case: Case, domain: Domain, fault: str) -> Plan:
    """The plan for one named fault, with the label a correct judge must reproduce."""
    calls = _golden_calls(case)

    def label(verdict: str, failure_class: str | None) -> dict[str, Any]:
        return {"fault": fault, "verdict": verdict, "failure_class": failure_class}

    if fault == "api_error":
        return Plan([], label("AGENT_ERROR", None), http_error=500)
    if fault == "endless_loop":
        return Plan([], label("AGENT_ERROR", None), endless=True)
    if fault == "harmless_extra_read":
        extra = _extra_read(case, domain)
        assert extra is not None
        return Plan(_turns(calls, case) + [[extra]], label("PASS", None))
    if fault == "call_on_negative":
        return Plan([[PlannedCall(*EXTRA_MUTATION)]], label("FAIL", "CALL_UNEXPECTED"))
    if fault == "extra_mutation":
        return Plan(_turns(calls, case) + [[PlannedCall(*EXTRA_MUTATION)]], label("FAIL", "CALL_EXTRA"))
    first, rest = calls[0], calls[1:]
    args = first.arguments or {}
    if fault == "wrong_value":
        key = _changeable_param(args, case.calls[0].param_rules)
        assert key is not None
        changed = dict(args, **{key: _other_value(key, args[key])})
        return _with_first(case, PlannedCall(first.tool, changed), rest, label("FAIL", "PARAM_WRONG_VALUE"))
    if fault == "missing_param":
        dropped = dict(args)
        dropped.pop(next(iter(args)))
        return _with_first(case, PlannedCall(first.tool, dropped), rest, label("FAIL", "PARAM_MISSING"))
    if fault == "hallucinated_id":
        key = next(k for k in args if k in HALLUCINATED)
        fake = dict(args, **{key: HALLUCINATED[key]})
        return _with_first(case, PlannedCall(first.tool, fake), rest, label("FAIL", "PARAM_HALLUCINATED_ID"))
    if fault == "invalid_json":
        raw = json.dumps(args, ensure_ascii=False)[:-1]  # the closing brace goes missing
        return _with_first(case, PlannedCall(first.tool, raw=raw), rest, label("FAIL", "PARAM_WRONG_FORMAT"))
    if fault == "unknown_tool":
        bogus = PlannedCall(f"{first.tool}_v2", args)
        return _with_first(case, bogus, rest, label("FAIL", "UNKNOWN_TOOL"))
    if fault == "wrong_tool":
        return _with_first(case, _sibling(first, domain), rest, label("FAIL", "TOOL_WRONG"))
    request, confirm = calls
    if fault == "skipped_confirm":
        return Plan([[request]], label("FAIL", "CALL_MISSING"))
    if fault == "wrong_order":
        early = PlannedCall(confirm.tool, dict(confirm.arguments or {}, action_id="ACT-001"))
        return Plan([[early], [request]], label("FAIL", "ORDER_WRONG"))
    if fault == "broken_chain":
        stray = PlannedCall(confirm.tool, dict(confirm.arguments or {}, action_id="ACT-002"))
        return Plan([[request], [stray]], label("FAIL", "CHAIN_BROKEN"))
    raise ValueError(f"unknown fault {fault!r}; choose one of {', '.join(FAULTS)}")


def _with_first(case: Case, first: PlannedCall, rest: list[PlannedCall], label: dict[str, Any]) -> Plan:
    return Plan(_turns([first, *rest], case) if rest else [[first]], label)


def _changeable_param(params: dict[str, Any], rules: dict[str, str]) -> str | None:
    """A parameter whose value can be swapped for another schema-valid one."""
    for key, value in params.items():
        if rules.get(key) == "any":
            continue
        if key in ENUM_SWAP and value in ENUM_SWAP[key]:
            return key
        if key in ("amount", "pickup_date", "comment", "new_address", "items"):
            return key
        if key in HALLUCINATED:
            return key
    return None


def _other_value(key: str, value: Any) -> Any:
    other_ids = {"W441": "W442", "U101": "U102", "U102": "U103", "U103": "U101", "P204": "P205",
                 "P207": "P206", "W442": "W448", "W443": "W441", "W445": "W441", "W447": "W441",
                 "W448": "W442"}  # fmt: skip
    if key in ENUM_SWAP:
        return ENUM_SWAP[key][value]
    if key == "amount":
        return value + 10
    if key == "pickup_date":
        return "2026-06-27"
    if key == "comment":
        return "换工作"
    if key == "new_address":
        return dict(value, city="深圳")
    if key == "items":
        return [dict(item, quantity=item["quantity"] + 1) for item in value]
    return other_ids.get(value, value)


def _sibling(call: PlannedCall, domain: Domain) -> PlannedCall:
    """A plausible but wrong existing tool that is never an ignorable whitelisted read."""
    a = call.arguments or {}
    fixtures = json.loads(domain.input_files["fixtures.json"])
    orders = {o["order_id"]: o for o in fixtures["orders"]}
    first_order = {o["user_id"]: o["order_id"] for o in reversed(fixtures["orders"])}
    if call.tool in ("get_product", "check_stock"):
        other = "check_stock" if call.tool == "get_product" else "get_product"
        return PlannedCall(other, {"product_id": a["product_id"]})
    if call.tool == "get_order":
        return PlannedCall("get_product", {"product_id": orders[a["order_id"]]["items"][0]["product_id"]})
    if call.tool in ("get_user", "list_orders"):
        return PlannedCall("get_order", {"order_id": first_order[a["user_id"]]})
    if call.tool in ("confirm_action", "abort_action"):
        other = "abort_action" if call.tool == "confirm_action" else "confirm_action"
        return PlannedCall(other, {"action_id": a["action_id"]}, chain_action=True)
    order = orders[a["order_id"]]
    if call.tool in ("request_exchange", "request_refund"):
        item = order["items"][0]["item_id"]
        args = {
            "order_id": order["order_id"],
            "items": [{"item_id": item, "quantity": 1}],
            "reason": "damaged",
        }
        return PlannedCall("request_return", args)
    if call.tool == "request_return":
        return PlannedCall("request_refund", {"order_id": order["order_id"], "amount": 1, "reason": "other"})
    if call.tool == "request_cancel":
        return PlannedCall(
            "request_address_update",
            {"order_id": order["order_id"], "new_address": order["shipping_address"]},
        )
    return PlannedCall("request_cancel", {"order_id": order["order_id"], "reason": "other"})


def _extra_read(case: Case, domain: Domain) -> PlannedCall | None:
    """A successful, schema- and fixture-valid read from the effective whitelist, if any."""
    candidates = {
        "get_return_policy": {},
        "get_user": {"user_id": "U101"},
        "list_orders": {"user_id": "U101"},
        "get_order": {"order_id": "W444"},
    }
    golden_tools = {c.tool for c in case.calls}
    for tool in case.effective_whitelist(domain.default_whitelist):
        if tool in candidates and tool not in golden_tools:
            return PlannedCall(tool, candidates[tool])
    return None
