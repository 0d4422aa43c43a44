"""What the simulated model needs to invent labelled faults in retail cases (`SimHints`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from traceladder.suite.domain.base import SimHints

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
OTHER_IDS = {"W441": "W442", "U101": "U102", "U102": "U103", "U103": "U101", "P204": "P205", "P207": "P206",
             "W442": "W448", "W443": "W441", "W445": "W441", "W447": "W441", "W448": "W442"}  # fmt: skip


def other_value(param: str, value: Any) -> Any:
    """Another schema-valid value for a golden parameter (None when there is none)."""
    if param in ENUM_SWAP:
        return ENUM_SWAP[param].get(value)
    if param == "amount":
        return value + 10
    if param == "pickup_date":
        return "2026-06-27"
    if param == "comment":
        return "换工作"
    if param == "new_address":
        return dict(value, city="深圳")
    if param == "items":
        return [dict(item, quantity=item["quantity"] + 1) for item in value]
    if param in HALLUCINATED:
        other = OTHER_IDS.get(value)
        return other if other != value else None
    return None


# A misstated status: the nearest wrong word, so the answer stays plausible.
STATUS_SWAP = {"delivered": "shipped", "shipped": "delivered", "pending": "processing",
               "processing": "shipped", "cancelled": "pending", "confirmed": "aborted",
               "aborted": "confirmed"}  # fmt: skip


def answer(results: list[dict[str, Any]], fault: str | None) -> str | None:
    """A final answer stating the latest order's status and total and the latest resolved action —
    the facts a customer acts on — or None when the results hold neither. `fault` misstates one:
    "amount" adds 17 to the total, "status" swaps a status word."""
    order = next((r for r in reversed(results) if {"order_id", "status", "total"} <= r.keys()), None)
    action = next(
        (r for r in reversed(results) if "action_id" in r and r.get("status") in ("confirmed", "aborted")),
        None,
    )
    if order is None and action is None:
        return None
    parts = []
    if order is not None:
        status, total = order["status"], order["total"]
        if fault == "amount":
            total = round(total + 17, 2)
        if fault == "status" and action is None:
            status = STATUS_SWAP.get(status, status)
        parts.append(f"订单{order['order_id']}当前状态为{status}，订单金额{total}元。")
    if action is not None:
        status = STATUS_SWAP[action["status"]] if fault == "status" else action["status"]
        parts.append(f"操作{action['action_id']}（{action['action']}）状态：{status}。")
    return "".join(parts)


def make_hints(fixtures: Mapping[str, Any]) -> SimHints:
    orders = {o["order_id"]: o for o in fixtures["orders"]}
    first_order = {o["user_id"]: o["order_id"] for o in reversed(fixtures["orders"])}

    def sibling(tool: str, a: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
        """A plausible but wrong existing tool that is never an ignorable whitelisted read."""
        if tool in ("get_product", "check_stock"):
            return ("check_stock" if tool == "get_product" else "get_product"), {
                "product_id": a["product_id"]
            }
        if tool == "get_order":
            return "get_product", {"product_id": orders[a["order_id"]]["items"][0]["product_id"]}
        if tool in ("get_user", "list_orders"):
            return "get_order", {"order_id": first_order[a["user_id"]]}
        if tool in ("confirm_action", "abort_action"):
            return ("abort_action" if tool == "confirm_action" else "confirm_action"), {
                "action_id": a["action_id"]
            }
        order = orders[a["order_id"]]
        if tool in ("request_exchange", "request_refund"):
            item = order["items"][0]["item_id"]
            items = [{"item_id": item, "quantity": 1}]
            return "request_return", {"order_id": order["order_id"], "items": items,
                                      "reason": "damaged"}  # fmt: skip
        if tool == "request_return":
            return "request_refund", {"order_id": order["order_id"], "amount": 1, "reason": "other"}
        if tool == "request_cancel":
            return "request_address_update", {
                "order_id": order["order_id"],
                "new_address": order["shipping_address"],
            }
        return "request_cancel", {"order_id": order["order_id"], "reason": "other"}

    return SimHints(
        hallucinated=HALLUCINATED,
        other_value=other_value,
        sibling=sibling,
        extra_reads={
            "get_return_policy": {},
            "get_user": {"user_id": "U101"},
            "list_orders": {"user_id": "U101"},
            "get_order": {"order_id": "W444"},
        },
        extra_mutation=("request_cancel", {"order_id": "W442", "reason": "other"}),
        answer_text="好的，已为您处理。",
        answer=answer,
        answer_faults={
            "ungrounded_amount": frozenset({"get_order"}),
            "wrong_status": frozenset({"get_order", "confirm_action", "abort_action"}),
        },
        clarify_text="您好，请提供订单号或更多信息，我再为您处理。",
    )
