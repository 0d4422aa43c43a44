"""One test per tool for its success path and its error paths, plus fixture immutability."""

from __future__ import annotations

import hashlib
import json

import pytest

from traceladder.suite.domain.retail.domain import read_data_files

ADDRESS = {
    "recipient": "李伟",
    "street": "徐汇区漕溪北路88号",
    "city": "上海",
    "postal_code": "200030",
    "country": "CN",
}


def err(outcome) -> str:
    assert not outcome.ok
    assert set(outcome.result) == {"error"}
    return outcome.error_type


def test_get_user(sandbox):
    ok = sandbox.execute("get_user", '{"user_id": "U101"}')
    assert ok.ok and ok.result["name"] == "李伟"
    assert err(sandbox.execute("get_user", {"user_id": "U999"})) == "not_found"
    assert err(sandbox.execute("get_user", {"user_id": "101"})) == "invalid_arguments"
    assert err(sandbox.execute("get_user", {})) == "invalid_arguments"


def test_get_order(sandbox):
    ok = sandbox.execute("get_order", {"order_id": "W443"})
    assert ok.ok and ok.result["status"] == "shipped"
    assert err(sandbox.execute("get_order", {"order_id": "W400"})) == "not_found"
    assert err(sandbox.execute("get_order", {"order_id": "W443", "x": 1})) == "invalid_arguments"


def test_list_orders(sandbox):
    ok = sandbox.execute("list_orders", {"user_id": "U102", "status": "delivered"})
    assert [o["order_id"] for o in ok.result["orders"]] == ["W444", "W445"]
    every = sandbox.execute("list_orders", {"user_id": "U102"})
    assert len(every.result["orders"]) == 3
    assert err(sandbox.execute("list_orders", {"user_id": "U109"})) == "not_found"
    assert err(sandbox.execute("list_orders", {"user_id": "U102", "status": "lost"})) == ("invalid_arguments")


def test_get_product(sandbox):
    ok = sandbox.execute("get_product", {"product_id": "P204"})
    assert ok.ok and [v["item_id"] for v in ok.result["variants"]] == ["I2041", "I2042"]
    assert err(sandbox.execute("get_product", {"product_id": "P299"})) == "not_found"


def test_check_stock(sandbox):
    ok = sandbox.execute("check_stock", {"product_id": "P207"})
    assert ok.result["stock"] == [
        {"item_id": "I2071", "in_stock": 6},
        {"item_id": "I2072", "in_stock": 0},
    ]
    one = sandbox.execute("check_stock", {"product_id": "P202", "item_id": "I2022"})
    assert one.result["stock"] == [{"item_id": "I2022", "in_stock": 5}]
    assert err(sandbox.execute("check_stock", {"product_id": "P202", "item_id": "I2011"})) == ("not_found")
    assert err(sandbox.execute("check_stock", {"product_id": "P200"})) == "not_found"


def test_get_return_policy(sandbox):
    full = sandbox.execute("get_return_policy", "{}")
    assert full.ok and full.result["return_window_days"] == 30
    topic = sandbox.execute("get_return_policy", {"topic": "refunds"})
    assert set(topic.result) == {"return_window_days", "refunds"}
    assert err(sandbox.execute("get_return_policy", {"topic": "shipping"})) == "invalid_arguments"


def test_request_address_update(sandbox):
    ok = sandbox.execute("request_address_update", {"order_id": "W442", "new_address": ADDRESS})
    assert ok.ok and ok.result["action_id"] == "ACT-001"
    shipped = sandbox.execute("request_address_update", {"order_id": "W443", "new_address": ADDRESS})
    assert err(shipped) == "precondition_failed"
    bad = dict(ADDRESS, postal_code="2000")
    assert err(sandbox.execute("request_address_update", {"order_id": "W442", "new_address": bad})) == (
        "invalid_arguments"
    )


def test_request_cancel(sandbox):
    ok = sandbox.execute("request_cancel", {"order_id": "W448", "reason": "changed_mind"})
    assert ok.ok and ok.result["status"] == "pending_confirmation"
    delivered = sandbox.execute("request_cancel", {"order_id": "W441", "reason": "other"})
    assert err(delivered) == "precondition_failed"
    assert "delivered" in delivered.result["error"]["message"]
    assert err(sandbox.execute("request_cancel", {"order_id": "W446", "reason": "other"})) == (
        "precondition_failed"
    )


def test_request_return(sandbox):
    items = [{"item_id": "I2011", "quantity": 2}]
    ok = sandbox.execute("request_return", {"order_id": "W441", "items": items, "reason": "damaged"})
    assert ok.ok
    late = sandbox.execute(
        "request_return",
        {"order_id": "W444", "items": [{"item_id": "I2061", "quantity": 1}], "reason": "damaged"},
    )
    assert err(late) == "precondition_failed" and "window" in late.result["error"]["message"]
    too_many = [{"item_id": "I2011", "quantity": 3}]
    assert (
        err(sandbox.execute("request_return", {"order_id": "W441", "items": too_many, "reason": "damaged"}))
        == "precondition_failed"
    )
    gift = [{"item_id": "I2091", "quantity": 1}]
    assert (
        err(sandbox.execute("request_return", {"order_id": "W447", "items": gift, "reason": "damaged"}))
        == "precondition_failed"
    )
    bad_date = {
        "order_id": "W441",
        "items": items,
        "reason": "damaged",
        "pickup_date": "2026-13-45",
    }
    assert err(sandbox.execute("request_return", bad_date)) == "invalid_arguments"
    past = dict(bad_date, pickup_date="2026-06-01")
    assert err(sandbox.execute("request_return", past)) == "precondition_failed"


def test_request_exchange(sandbox):
    base = {"order_id": "W445", "item_id": "I2021", "reason": "wrong_size"}
    assert sandbox.execute("request_exchange", dict(base, replacement_item_id="I2022")).ok
    out_of_stock = sandbox.execute("request_exchange", dict(base, replacement_item_id="I2023"))
    assert err(out_of_stock) == "precondition_failed" and "stock" in out_of_stock.result["error"]["message"]
    other_product = sandbox.execute("request_exchange", dict(base, replacement_item_id="I2011"))
    assert err(other_product) == "precondition_failed"
    assert err(sandbox.execute("request_exchange", dict(base, replacement_item_id="I9999"))) == "not_found"
    pending = dict(base, order_id="W442", replacement_item_id="I2022")
    assert err(sandbox.execute("request_exchange", pending)) == "precondition_failed"


def test_request_refund(sandbox):
    assert sandbox.execute("request_refund", {"order_id": "W447", "amount": 89, "reason": "damaged"}).ok
    too_much = {"order_id": "W447", "amount": 1000.5, "reason": "damaged"}
    assert err(sandbox.execute("request_refund", too_much)) == "precondition_failed"
    cancelled = {"order_id": "W446", "amount": 10, "reason": "other"}
    assert err(sandbox.execute("request_refund", cancelled)) == "precondition_failed"
    assert err(sandbox.execute("request_refund", {"order_id": "W447", "amount": 0, "reason": "damaged"})) == (
        "invalid_arguments"
    )


def test_confirm_and_abort_resolve_stubs_and_ledger(sandbox):
    sandbox.execute("request_cancel", {"order_id": "W442", "reason": "changed_mind"})
    sandbox.execute("request_cancel", {"order_id": "W448", "reason": "other"})
    assert sandbox.execute("confirm_action", {"action_id": "ACT-001"}).result["status"] == "confirmed"
    assert err(sandbox.execute("confirm_action", {"action_id": "ACT-001"})) == "action_already_resolved"
    assert sandbox.execute("abort_action", {"action_id": "ACT-002", "reason": "no"}).ok
    assert err(sandbox.execute("abort_action", {"action_id": "ACT-002"})) == "action_already_resolved"
    assert err(sandbox.execute("confirm_action", {"action_id": "ACT-009"})) == "unknown_action"
    assert err(sandbox.execute("abort_action", {"action_id": "nope"})) == "invalid_arguments"
    assert [(e.action_id, e.tool, e.status) for e in sandbox.ledger()] == [
        ("ACT-001", "request_cancel", "confirmed"),
        ("ACT-002", "request_cancel", "aborted"),
    ]


def test_action_ids_are_deterministic_per_sandbox(retail):
    first, second = retail.new_sandbox(), retail.new_sandbox()
    args = {"order_id": "W442", "reason": "changed_mind"}
    assert first.execute("request_cancel", args).result["action_id"] == "ACT-001"
    assert second.execute("request_cancel", args).result["action_id"] == "ACT-001"


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("delete_everything", {}, "unknown_tool"),
        ("get_user", '{"user_id": "U101"', "invalid_json"),
        ("get_user", "[1, 2]", "arguments_not_object"),
        ("get_user", 42, "arguments_not_object"),
    ],
)
def test_bad_calls_are_results_not_exceptions(sandbox, tool, arguments, expected):
    assert err(sandbox.execute(tool, arguments)) == expected


def test_fixtures_unchanged_after_exercising_every_tool(retail):
    before_files = hashlib.sha256(b"".join(read_data_files().values())).hexdigest()
    box = retail.new_sandbox()
    calls = [
        ("get_user", {"user_id": "U101"}),
        ("get_order", {"order_id": "W441"}),
        ("list_orders", {"user_id": "U101"}),
        ("get_product", {"product_id": "P202"}),
        ("check_stock", {"product_id": "P202"}),
        ("get_return_policy", {}),
        ("request_address_update", {"order_id": "W442", "new_address": ADDRESS}),
        ("request_cancel", {"order_id": "W448", "reason": "other"}),
        (
            "request_return",
            {
                "order_id": "W441",
                "items": [{"item_id": "I2011", "quantity": 1}],
                "reason": "damaged",
            },
        ),
        (
            "request_exchange",
            {
                "order_id": "W445",
                "item_id": "I2021",
                "replacement_item_id": "I2022",
                "reason": "wrong_size",
            },
        ),
        ("request_refund", {"order_id": "W443", "amount": 259, "reason": "not_received"}),
        ("confirm_action", {"action_id": "ACT-001"}),
        ("abort_action", {"action_id": "ACT-002"}),
    ]
    assert sorted(t for t, _ in calls) == sorted(retail.tool_names)
    for tool, args in calls:
        outcome = box.execute(tool, args)
        assert outcome.ok, (tool, outcome.result)
        # A caller scribbling on a returned result must not reach the fixtures either.
        outcome.result["scribble"] = True
        for value in outcome.result.values():
            if isinstance(value, list) and value and isinstance(value[0], dict):
                value[0]["scribble"] = True
    snapshot = json.dumps([retail.new_sandbox().execute(t, a).result for t, a in calls[:6]], sort_keys=True)
    assert "scribble" not in snapshot
    assert hashlib.sha256(b"".join(read_data_files().values())).hexdigest() == before_files
