"""Assembles the retail `Domain` from its frozen data files."""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from traceladder.suite.domain.base import ChainSpec, Domain
from traceladder.suite.domain.retail.sandbox import RetailSandbox, RetailWorld
from traceladder.suite.domain.retail.simulation import make_hints
from traceladder.suite.domain.retail.suite import RETAIL_SUITE

RETAIL_DATA_FILES = ("tools.json", "fixtures.json", "policy.json", "system_prompt.txt")
READ_ONLY = frozenset(
    {"get_user", "get_order", "list_orders", "get_product", "check_stock", "get_return_policy"}
)
REQUESTS = frozenset(
    {"request_address_update", "request_cancel", "request_return", "request_exchange", "request_refund"}
)
CONFIRMATIONS = frozenset({"confirm_action", "abort_action"})
DEFAULT_WHITELIST = ("get_user", "list_orders", "get_return_policy")
EXPECTED_TOOLS = 13


def _data_dir() -> Path:
    return Path(str(resources.files("traceladder.suite.domain.retail") / "data"))


def read_data_files() -> dict[str, bytes]:
    """The raw bytes of the shipped data files, keyed by file name."""
    return {name: (_data_dir() / name).read_bytes() for name in RETAIL_DATA_FILES}


def build_domain(files: Mapping[str, bytes]) -> Domain:
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
    domain = Domain(
        name="retail",
        tools=tools,
        read_only_tools=READ_ONLY,
        default_whitelist=DEFAULT_WHITELIST,
        id_fields=id_fields,
        system_prompt=files["system_prompt.txt"].decode("utf-8"),
        sandbox_factory=lambda: RetailSandbox(world),
        chains=ChainSpec(requests=REQUESTS, confirmations=CONFIRMATIONS, link="action_id"),
        suite=RETAIL_SUITE,
        suite_path=_data_dir() / "retail_fc.jsonl",
        simulation=make_hints(fixtures),
        input_files=dict(files),
        from_files=build_domain,
        extra_checks=_retail_checks,
        policy_text=files["system_prompt.txt"].decode("utf-8").strip()
        + "\n\nStore policy (policy.json):\n"
        + json.dumps(policy, ensure_ascii=False, indent=1),
    )
    world = RetailWorld(fixtures, policy, lambda: domain.validators)
    return domain


def _retail_checks(domain: Domain) -> list[str]:
    from traceladder.suite.domain.retail.validate import validate_retail_fixtures

    problems = []
    if len(domain.tools) != EXPECTED_TOOLS:
        problems.append(f"tools: expected exactly {EXPECTED_TOOLS} tools, found {len(domain.tools)}")
    fixtures = json.loads(domain.input_files["fixtures.json"])
    policy = json.loads(domain.input_files["policy.json"])
    return problems + validate_retail_fixtures(fixtures, policy)


@cache
def load_retail_domain() -> Domain:
    """The shipped retail domain (loaded once per process)."""
    return build_domain(read_data_files())
