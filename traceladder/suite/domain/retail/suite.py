"""The retail suite's contract: four dimensions, three language variants per scenario, and one
`CategorySpec` line per logical scenario (docs/adding-cases.md)."""

from __future__ import annotations

from traceladder.suite.cases.spec import CategorySpec, SuiteSpec, SuiteTotals

CATEGORIES: dict[str, CategorySpec] = {
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

RETAIL_SUITE = SuiteSpec(
    name="retail_fc",
    id_prefix="fc",
    dimensions={
        "D1": "tool selection",
        "D2": "parameter fill",
        "D3": "when to call",
        "D4": "request/confirm chains",
    },
    categories=CATEGORIES,
    # Bumped deliberately when a scenario is added; the validator checks it against the table.
    totals=SuiteTotals(total=72, per_dimension={"D1": 18, "D2": 18, "D3": 18, "D4": 18}, negative=12),
    variants_per_scenario=3,  # canonical Chinese, colloquial Chinese, mixed Chinese/English
    fixtures=("standard",),
)
