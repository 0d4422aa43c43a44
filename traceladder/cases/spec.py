"""The suite-level contract, declared once: what every category must look like.

Adding a logical scenario = three records in the JSONL plus one `CategorySpec` line here (see
docs/adding-cases.md). Counts per dimension and the negative count are derived from this table, so
the validator never carries a second hard-coded copy of them.
"""

from __future__ import annotations

from dataclasses import dataclass

VARIANTS_PER_SCENARIO = 3  # canonical Chinese, colloquial Chinese, mixed Chinese/English


@dataclass(frozen=True)
class CategorySpec:
    dimension: str
    first_id: int  # number of the canonical variant; the other two follow consecutively
    tools: tuple[str, ...]  # the golden tool sequence
    order_sensitive: bool
    negative: bool
    # None: no case-level list (the default whitelist applies); a tuple: exactly this list.
    allowed_extra: tuple[str, ...] | None = None


CATEGORY_SPECS: dict[str, CategorySpec] = {
    # D1 tool selection
    "order_lookup": CategorySpec("D1", 1, ("get_order",), False, False),
    "user_lookup": CategorySpec("D1", 4, ("get_user",), False, False),
    "product_lookup": CategorySpec("D1", 7, ("get_product",), False, False),
    "stock_vs_product": CategorySpec("D1", 10, ("check_stock",), False, False),
    "exchange_vs_return": CategorySpec("D1", 13, ("request_exchange",), False, False),
    "refund_vs_return": CategorySpec("D1", 16, ("request_refund",), False, False),
    # D2 parameter fill
    "nested_address": CategorySpec("D2", 1, ("request_address_update",), False, False),
    "item_list": CategorySpec("D2", 4, ("request_return",), False, False),
    "enum_filter": CategorySpec("D2", 7, ("list_orders",), False, False),
    "date_param": CategorySpec("D2", 10, ("request_return",), False, False),
    "numeric_amount": CategorySpec("D2", 13, ("request_refund",), False, False),
    "free_text_comment": CategorySpec("D2", 16, ("request_cancel",), False, False),
    # D3 when to call
    "no_call_greeting": CategorySpec("D3", 1, (), False, True, ()),
    "ambiguous_cancel": CategorySpec("D3", 4, (), False, True, ()),
    "ambiguous_return_reads_ok": CategorySpec(
        "D3", 7, (), False, True, ("get_user", "list_orders", "get_order")
    ),
    "refused_return_window": CategorySpec("D3", 10, (), False, True, ("get_order", "get_return_policy")),
    "optional_policy_read": CategorySpec("D3", 13, (), False, False, ("get_return_policy",)),
    "lookup_required": CategorySpec("D3", 16, ("get_order",), False, False),
    # D4 request/confirm chains
    "cancel_confirm": CategorySpec("D4", 1, ("request_cancel", "confirm_action"), True, False),
    "cancel_abort": CategorySpec("D4", 4, ("request_cancel", "abort_action"), True, False),
    "return_confirm": CategorySpec("D4", 7, ("request_return", "confirm_action"), True, False),
    "exchange_confirm": CategorySpec("D4", 10, ("request_exchange", "confirm_action"), True, False),
    "address_abort": CategorySpec("D4", 13, ("request_address_update", "abort_action"), True, False),
    "refund_confirm": CategorySpec("D4", 16, ("request_refund", "confirm_action"), True, False),
}


def expected_counts(specs: dict[str, CategorySpec]) -> tuple[int, dict[str, int], int]:
    """(total cases, cases per dimension, negative cases) implied by the category table."""
    per_dim: dict[str, int] = {}
    for spec in specs.values():
        per_dim[spec.dimension] = per_dim.get(spec.dimension, 0) + VARIANTS_PER_SCENARIO
    negatives = sum(VARIANTS_PER_SCENARIO for s in specs.values() if s.negative)
    return sum(per_dim.values()), per_dim, negatives


@dataclass(frozen=True)
class SuiteTotals:
    """The counts the suite is expected to have; bumped deliberately when a scenario is added."""

    total: int
    per_dimension: dict[str, int]
    negative: int


SUITE_TOTALS = SuiteTotals(total=72, per_dimension={"D1": 18, "D2": 18, "D3": 18, "D4": 18}, negative=12)
