"""Checks a domain's contract: tool schemas, fixture referential integrity, whitelist.

`validate_retail_files` returns every violation it finds (never stops at the first), so one run of
`traceladder domain validate` shows everything to fix.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from traceladder.domain.base import Domain

# The shape of an OpenAI "function" tool, as the Chat Completions API accepts it.
OPENAI_TOOL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["type", "function"],
    "additionalProperties": False,
    "properties": {
        "type": {"const": "function"},
        "function": {
            "type": "object",
            "required": ["name", "description", "parameters"],
            "additionalProperties": False,
            "properties": {
                "name": {"type": "string", "pattern": "^[a-zA-Z0-9_-]{1,64}$"},
                "description": {"type": "string", "minLength": 1},
                "parameters": {"type": "object", "required": ["type"]},
                "strict": {"type": "boolean"},
            },
        },
    },
}
_TOOL_SHAPE = Draft202012Validator(OPENAI_TOOL_SCHEMA)


def validate_domain(domain: Domain, *, expected_tools: int | None = None) -> list[str]:
    """Every violation of the tool and whitelist contract, as readable one-line messages."""
    problems: list[str] = []
    if expected_tools is not None and len(domain.tools) != expected_tools:
        problems.append(f"tools: expected exactly {expected_tools} tools, found {len(domain.tools)}")
    seen: set[str] = set()
    for index, tool in enumerate(domain.tools):
        label = f"tools[{index}]"
        for err in _TOOL_SHAPE.iter_errors(tool):
            where = "/".join(str(p) for p in err.absolute_path)
            problems.append(f"{label}: not a valid OpenAI function tool at {where!r}: {err.message}")
        fn = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(fn, dict):
            continue
        name = fn.get("name", label)
        if name in seen:
            problems.append(f"{name}: duplicate tool name")
        seen.add(name)
        params = fn.get("parameters")
        if not isinstance(params, dict):
            continue
        try:
            Draft202012Validator.check_schema(params)
        except SchemaError as exc:
            problems.append(f"{name}: parameters are not valid JSON Schema 2020-12: {exc.message}")
            continue
        problems += [f"{name}: {p}" for p in _strictness(params, "parameters")]
    for group, names in (
        ("read-only", domain.read_only_tools),
        ("confirmation", domain.confirmation_tools),
    ):
        problems += [f"{group} tool {n!r} is not a defined tool" for n in sorted(names - seen)]
    for name in domain.default_whitelist:
        if name not in domain.read_only_tools:
            problems.append(f"whitelist: {name!r} is not a read-only tool")
    return problems


def _strictness(schema: dict[str, Any], where: str) -> Iterator[str]:
    """Objects must close their properties and name required fields; recurse into children."""
    if schema.get("type") == "object":
        if schema.get("additionalProperties") is not False:
            yield f"{where}: object schema must set additionalProperties: false"
        if "required" not in schema:
            yield f"{where}: object schema must list its required fields"
        for key, child in schema.get("properties", {}).items():
            yield from _strictness(child, f"{where}.{key}")
    if schema.get("type") == "array" and isinstance(schema.get("items"), dict):
        yield from _strictness(schema["items"], f"{where}[]")


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


def validate_retail_files(files: dict[str, bytes]) -> list[str]:
    """Validate the retail data files (shipped or edited copies): tools, fixtures, whitelist."""
    from traceladder.domain.retail.domain import build_domain

    try:
        fixtures = json.loads(files["fixtures.json"])
        policy = json.loads(files["policy.json"])
        domain = build_domain(files)
    except RecursionError:
        return ["data files could not be loaded: JSON nested too deeply"]
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        return [f"data files could not be loaded: {type(exc).__name__}: {exc}"]
    return validate_domain(domain, expected_tools=13) + validate_retail_fixtures(fixtures, policy)
