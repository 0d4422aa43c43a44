"""Assembles the retail `Domain` from its frozen data files."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from traceladder.domain.base import Domain
from traceladder.domain.retail.sandbox import RetailSandbox, RetailWorld

RETAIL_DATA_FILES = ("tools.json", "fixtures.json", "policy.json", "system_prompt.txt")
READ_ONLY = frozenset(
    {"get_user", "get_order", "list_orders", "get_product", "check_stock", "get_return_policy"}
)
CONFIRMATIONS = frozenset({"confirm_action", "abort_action"})
DEFAULT_WHITELIST = ("get_user", "list_orders", "get_return_policy")


def read_data_files() -> dict[str, bytes]:
    """The raw bytes of the shipped data files, keyed by file name."""
    folder = resources.files("traceladder.domain.retail") / "data"
    return {name: (folder / name).read_bytes() for name in RETAIL_DATA_FILES}


def build_domain(files: dict[str, bytes]) -> Domain:
    """Build a retail `Domain` from data-file bytes (shipped, or edited copies in tests)."""
    tools = tuple(json.loads(files["tools.json"]))
    fixtures: dict[str, Any] = json.loads(files["fixtures.json"])
    policy: dict[str, Any] = json.loads(files["policy.json"])
    item_ids = {v["item_id"] for p in fixtures["products"] for v in p["variants"]}
    id_fields = {
        "user_id": frozenset(u["user_id"] for u in fixtures["users"]),
        "order_id": frozenset(o["order_id"] for o in fixtures["orders"]),
        "product_id": frozenset(p["product_id"] for p in fixtures["products"]),
        "item_id": frozenset(item_ids),
        "replacement_item_id": frozenset(item_ids),
    }
    world = RetailWorld(fixtures, policy, {t["function"]["name"]: t["function"]["parameters"] for t in tools})
    return Domain(
        name="retail",
        tools=tools,
        read_only_tools=READ_ONLY,
        confirmation_tools=CONFIRMATIONS,
        default_whitelist=DEFAULT_WHITELIST,
        id_fields=id_fields,
        system_prompt=files["system_prompt.txt"].decode("utf-8"),
        sandbox_factory=lambda: RetailSandbox(world),
        input_files=dict(files),
    )


@cache
def load_retail_domain() -> Domain:
    """The shipped retail domain (loaded once per process)."""
    return build_domain(read_data_files())
