"""Retail's own checks: referential integrity of the fixtures and the policy's shape."""

from __future__ import annotations

from typing import Any


def validate_retail_fixtures(fixtures: dict[str, Any], policy: dict[str, Any]) -> list[str]:
    """Referential integrity: orders→users, order items→products and variants; unique IDs."""
    problems: list[str] = []
    users = _unique(fixtures.get("users", []), "user_id", problems)
    products = _unique(fixtures.get("products", []), "product_id", problems)
    variants: dict[str, str] = {}
    for product in fixtures.get("products", []):
        for variant in product.get("variants", []):
            if variant["item_id"] in variants:
                problems.append(f"products: duplicate item_id {variant['item_id']}")
            variants[variant["item_id"]] = product["product_id"]
    _unique(fixtures.get("orders", []), "order_id", problems)
    for order in fixtures.get("orders", []):
        oid = order.get("order_id")
        if order.get("user_id") not in users:
            problems.append(f"orders.{oid}: user_id {order.get('user_id')!r} is not a user")
        if order.get("status") not in {"pending", "shipped", "delivered", "cancelled"}:
            problems.append(f"orders.{oid}: unknown status {order.get('status')!r}")
        if order.get("status") == "delivered" and not order.get("delivered_date"):
            problems.append(f"orders.{oid}: delivered order without delivered_date")
        for line in order.get("items", []):
            pid, iid = line.get("product_id"), line.get("item_id")
            if pid not in products:
                problems.append(f"orders.{oid}: item product_id {pid!r} is not a product")
            elif variants.get(iid) != pid:
                problems.append(f"orders.{oid}: item_id {iid!r} is not a variant of {pid}")
    if not isinstance(policy.get("return_window_days"), int):
        problems.append("policy: return_window_days must be an integer")
    return problems


def _unique(rows: list[dict[str, Any]], key: str, problems: list[str]) -> set[str]:
    ids: set[str] = set()
    for row in rows:
        if row.get(key) in ids:
            problems.append(f"{key}: duplicate {row.get(key)!r}")
        ids.add(row.get(key))  # type: ignore[arg-type]
    return ids
