"""The retail dry-run sandbox: reads answer from frozen fixtures, requests create action stubs.

Nothing here raises to the caller and nothing changes the fixtures: reads return deep copies,
requests only append to this sandbox's own action ledger.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from datetime import date
from functools import cached_property
from typing import TYPE_CHECKING, Any

from traceladder.suite.domain.base import LedgerEntry, ToolOutcome

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

Args = dict[str, Any]


class RetailWorld:
    """The frozen fixtures, their indexes and the compiled argument validators — built once per
    domain and shared read-only by every sandbox (a sandbox per case must not recompile them).

    The validators are compiled by `compile_validators` when the first sandbox is made: a command
    that only names the domain (`report`, for its dimensions and tools) compiles none, and does
    not import jsonschema."""

    def __init__(
        self,
        fixtures: dict[str, Any],
        policy: dict[str, Any],
        compile_validators: Callable[[], Mapping[str, Draft202012Validator]],
    ) -> None:
        self.fixtures = fixtures
        self.policy = policy
        self._compile_validators = compile_validators
        self.users = {u["user_id"]: u for u in fixtures["users"]}
        self.orders = {o["order_id"]: o for o in fixtures["orders"]}
        self.products = {p["product_id"]: p for p in fixtures["products"]}
        self.variants = {v["item_id"]: (p, v) for p in fixtures["products"] for v in p["variants"]}
        self.today = date.fromisoformat(fixtures["today"])

    @cached_property
    def validators(self) -> Mapping[str, Draft202012Validator]:
        return self._compile_validators()


class RetailSandbox:
    """A fresh dry-run world for one case. `action_id`s are ACT-001, ACT-002, … in request order."""

    def __init__(self, world: RetailWorld) -> None:
        self._fx = world.fixtures
        self._policy = world.policy
        self._validators = world.validators
        self._users = world.users
        self._orders = world.orders
        self._products = world.products
        self._variants = world.variants
        self._today = world.today
        self._actions: dict[str, LedgerEntry] = {}
        self._handlers: dict[str, Callable[[Args], ToolOutcome]] = {
            "get_user": self._get_user,
            "get_order": self._get_order,
            "list_orders": self._list_orders,
            "get_product": self._get_product,
            "check_stock": self._check_stock,
            "get_return_policy": self._get_return_policy,
            "request_address_update": self._request_address_update,
            "request_cancel": self._request_cancel,
            "request_return": self._request_return,
            "request_exchange": self._request_exchange,
            "request_refund": self._request_refund,
            "confirm_action": lambda a: self._resolve(a, "confirmed"),
            "abort_action": lambda a: self._resolve(a, "aborted"),
        }

    # -- entry point -------------------------------------------------------------------------

    def execute(self, tool: str, arguments: Any) -> ToolOutcome:
        """Run one tool call. `arguments` may be a JSON string (as models send it) or a dict."""
        handler = self._handlers.get(tool)
        if handler is None:
            return ToolOutcome.error("unknown_tool", f"no tool named {tool!r}")
        if isinstance(arguments, str | bytes):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except ValueError as exc:
                return ToolOutcome.error("invalid_json", f"arguments are not valid JSON: {exc}")
        if not isinstance(arguments, dict):
            return ToolOutcome.error("arguments_not_object", "arguments must be a JSON object")
        from traceladder.evaluate.rungs.untrusted_schema import Uncheckable, schema_errors

        try:
            errors = sorted(schema_errors(self._validators[tool], arguments), key=lambda e: e.path)
        except Uncheckable as exc:
            return ToolOutcome.error("invalid_arguments", f"(root): {exc}")
        if errors:
            where = "/".join(str(p) for p in errors[0].absolute_path) or "(root)"
            return ToolOutcome.error("invalid_arguments", f"{where}: {errors[0].message}")
        try:
            return handler(arguments)
        except Exception as exc:  # a bug in a handler is still an observation, never a crash
            return ToolOutcome.error("internal_error", f"{type(exc).__name__}: {exc}")

    def ledger(self) -> tuple[LedgerEntry, ...]:
        return tuple(self._actions.values())

    # -- reads -------------------------------------------------------------------------------

    def _get_user(self, a: Args) -> ToolOutcome:
        user = self._users.get(a["user_id"])
        if user is None:
            return _not_found("user", a["user_id"])
        return _ok(user)

    def _get_order(self, a: Args) -> ToolOutcome:
        order = self._orders.get(a["order_id"])
        if order is None:
            return _not_found("order", a["order_id"])
        return _ok(order)

    def _list_orders(self, a: Args) -> ToolOutcome:
        if a["user_id"] not in self._users:
            return _not_found("user", a["user_id"])
        orders = [
            {k: o[k] for k in ("order_id", "status", "placed_date", "total")}
            for o in self._fx["orders"]
            if o["user_id"] == a["user_id"] and a.get("status") in (None, o["status"])
        ]
        return _ok({"user_id": a["user_id"], "orders": orders})

    def _get_product(self, a: Args) -> ToolOutcome:
        product = self._products.get(a["product_id"])
        if product is None:
            return _not_found("product", a["product_id"])
        return _ok(product)

    def _check_stock(self, a: Args) -> ToolOutcome:
        product = self._products.get(a["product_id"])
        if product is None:
            return _not_found("product", a["product_id"])
        variants = product["variants"]
        if "item_id" in a:
            variants = [v for v in variants if v["item_id"] == a["item_id"]]
            if not variants:
                return ToolOutcome.error(
                    "not_found", f"item {a['item_id']} is not a variant of {a['product_id']}"
                )
        stock = [{"item_id": v["item_id"], "in_stock": v["stock"]} for v in variants]
        return _ok({"product_id": product["product_id"], "stock": stock})

    def _get_return_policy(self, a: Args) -> ToolOutcome:
        topic = a.get("topic")
        if topic is None:
            return _ok(self._policy)
        return _ok({"return_window_days": self._policy["return_window_days"], topic: self._policy[topic]})

    # -- requests ----------------------------------------------------------------------------

    def _order_in(self, a: Args, statuses: tuple[str, ...], verb: str) -> Any:
        """The order, or a ToolOutcome error when it is unknown or in the wrong state."""
        order = self._orders.get(a["order_id"])
        if order is None:
            return _not_found("order", a["order_id"])
        if order["status"] not in statuses:
            return ToolOutcome.error(
                "precondition_failed",
                f"order {order['order_id']} is {order['status']}; only "
                f"{' or '.join(statuses)} orders can be {verb}",
            )
        return order

    def _within_window(self, order: dict[str, Any]) -> ToolOutcome | None:
        delivered = date.fromisoformat(order["delivered_date"])
        days = (self._today - delivered).days
        if days > self._policy["return_window_days"]:
            return ToolOutcome.error(
                "precondition_failed",
                f"order {order['order_id']} was delivered {days} days ago; the return window is "
                f"{self._policy['return_window_days']} days",
            )
        return None

    def _request_address_update(self, a: Args) -> ToolOutcome:
        order = self._order_in(a, ("pending",), "re-addressed")
        if isinstance(order, ToolOutcome):
            return order
        return self._create("request_address_update", a)

    def _request_cancel(self, a: Args) -> ToolOutcome:
        order = self._order_in(a, ("pending",), "cancelled")
        if isinstance(order, ToolOutcome):
            return order
        return self._create("request_cancel", a)

    def _request_return(self, a: Args) -> ToolOutcome:
        order = self._order_in(a, ("delivered",), "returned")
        if isinstance(order, ToolOutcome):
            return order
        if (late := self._within_window(order)) is not None:
            return late
        ordered = {line["item_id"]: line for line in order["items"]}
        for wanted in a["items"]:
            line = ordered.get(wanted["item_id"])
            if line is None:
                return ToolOutcome.error(
                    "precondition_failed", f"item {wanted['item_id']} is not in {order['order_id']}"
                )
            if wanted["quantity"] > line["quantity"]:
                return ToolOutcome.error(
                    "precondition_failed",
                    f"only {line['quantity']} of {wanted['item_id']} were ordered",
                )
            if not self._products[line["product_id"]]["returnable"]:
                return ToolOutcome.error("precondition_failed", f"item {wanted['item_id']} is not returnable")
        if "pickup_date" in a and date.fromisoformat(a["pickup_date"]) <= self._today:
            return ToolOutcome.error("precondition_failed", "pickup_date must be in the future")
        return self._create("request_return", a)

    def _request_exchange(self, a: Args) -> ToolOutcome:
        order = self._order_in(a, ("delivered",), "exchanged")
        if isinstance(order, ToolOutcome):
            return order
        if (late := self._within_window(order)) is not None:
            return late
        if a["item_id"] not in {line["item_id"] for line in order["items"]}:
            return ToolOutcome.error(
                "precondition_failed", f"item {a['item_id']} is not in {order['order_id']}"
            )
        if a["replacement_item_id"] not in self._variants:
            return _not_found("item", a["replacement_item_id"])
        product, _ = self._variants[a["item_id"]]
        replacement_product, replacement = self._variants[a["replacement_item_id"]]
        if replacement_product["product_id"] != product["product_id"]:
            return ToolOutcome.error(
                "precondition_failed", "an exchange must be for a variant of the same product"
            )
        if a["replacement_item_id"] == a["item_id"]:
            return ToolOutcome.error("precondition_failed", "the replacement is the same item")
        if replacement["stock"] <= 0:
            return ToolOutcome.error(
                "precondition_failed", f"replacement {a['replacement_item_id']} is out of stock"
            )
        return self._create("request_exchange", a)

    def _request_refund(self, a: Args) -> ToolOutcome:
        order = self._order_in(a, ("shipped", "delivered"), "refunded")
        if isinstance(order, ToolOutcome):
            return order
        if a["amount"] > order["total"]:
            return ToolOutcome.error(
                "precondition_failed",
                f"refund {a['amount']} exceeds the order total {order['total']}",
            )
        return self._create("request_refund", a)

    # -- the action ledger -------------------------------------------------------------------

    def _create(self, tool: str, a: Args) -> ToolOutcome:
        action_id = f"ACT-{len(self._actions) + 1:03d}"
        self._actions[action_id] = LedgerEntry(action_id, tool, copy.deepcopy(a), "requested")
        return ToolOutcome(
            True,
            {
                "action_id": action_id,
                "status": "pending_confirmation",
                "action": tool,
                "message": "Pending. Call confirm_action to execute or abort_action to withdraw.",
            },
        )

    def _resolve(self, a: Args, status: str) -> ToolOutcome:
        entry = self._actions.get(a["action_id"])
        if entry is None:
            return ToolOutcome.error("unknown_action", f"no pending action {a['action_id']}")
        if entry.status != "requested":
            return ToolOutcome.error(
                "action_already_resolved", f"action {entry.action_id} is already {entry.status}"
            )
        self._actions[entry.action_id] = LedgerEntry(entry.action_id, entry.tool, entry.arguments, status)
        return ToolOutcome(True, {"action_id": entry.action_id, "status": status, "action": entry.tool})


def _ok(payload: dict[str, Any]) -> ToolOutcome:
    return ToolOutcome(True, copy.deepcopy(payload))


def _not_found(kind: str, ident: str) -> ToolOutcome:
    return ToolOutcome.error("not_found", f"no {kind} {ident}")
