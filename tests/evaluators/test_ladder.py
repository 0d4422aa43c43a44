"""The verdict rules of seed 1, one by one, on the retail domain."""

from __future__ import annotations

import json

import pytest

from tests.conftest import judge_case
from traceladder.evaluate.rungs.types import Call
from traceladder.suite.cases.model import Case, GoldenCall


@pytest.fixture(scope="module")
def ctx(retail):
    return retail


def case(calls=(), *, negative=False, allowed_extra=None, order_sensitive=False, skip=False):
    return Case(
        id="fc-d1-001", dimension="D1", category="t", instruction="x", notes="n",
        calls=tuple(GoldenCall(t, p, r) for t, p, r in calls), order_sensitive=order_sensitive,
        allowed_extra=allowed_extra, negative=negative, skip=skip, skip_reason="why" if skip else None,
    )  # fmt: skip


def call(name, args, ordinal=1, ok=True, result=None):
    raw = json.dumps(args) if not isinstance(args, str) else args
    try:
        parsed, is_json = json.loads(raw), True
    except ValueError:
        parsed, is_json = None, False
    return Call(name, parsed, raw, ok, result, ordinal, is_json)


GET_ORDER = ("get_order", {"order_id": "W441"}, {})
CANCEL = ("request_cancel", {"order_id": "W442", "reason": "changed_mind"}, {})
CONFIRM = ("confirm_action", {"action_id": "ACT-001"}, {"action_id": "any"})


def test_pass_and_settled_at(ctx):
    v = judge_case(case([GET_ORDER]), [call("get_order", {"order_id": "W441"})], ctx)
    assert (v.verdict, v.failure_class, v.settled_at) == ("PASS", None, 4)
    # no policy (invariants), no recorded sandbox ledger (state), no judge
    statuses = ["pass", "not_evaluated", "pass", "pass", "pass", "not_evaluated", "not_evaluated"]
    assert [r.status for r in v.rungs] == statuses


def test_default_whitelist_read_is_ignored(ctx):
    calls = [call("get_user", {"user_id": "U101"}, 1), call("get_order", {"order_id": "W441"}, 2)]
    v = judge_case(case([GET_ORDER]), calls, ctx)
    assert v.verdict == "PASS" and v.ignored == (1,)


def test_case_list_replaces_the_default_and_empty_is_strict(ctx):
    calls = [call("get_user", {"user_id": "U101"}, 1), call("get_order", {"order_id": "W441"}, 2)]
    v = judge_case(case([GET_ORDER], allowed_extra=("get_return_policy",)), calls, ctx)
    assert (v.verdict, v.failure_class) == ("FAIL", "CALL_EXTRA")
    v = judge_case(case([GET_ORDER], allowed_extra=()), calls, ctx)
    assert (v.verdict, v.failure_class) == ("FAIL", "CALL_EXTRA")
    v = judge_case(case([GET_ORDER], allowed_extra=("get_user",)), calls, ctx)
    assert v.verdict == "PASS"


@pytest.mark.parametrize(
    ("extra", "why"),
    [
        (call("get_user", {"user_id": "U199"}), "unknown fixture IDs"),
        (call("get_user", {"user_id": "101"}), "schema-invalid"),
        (call("get_user", {"user_id": "U101"}, ok=False), "returned an error"),
        (call("confirm_action", {"action_id": "ACT-001"}), "never ignorable"),
    ],
)
def test_extras_that_can_never_be_whitelisted(ctx, extra, why):
    v = judge_case(
        case([GET_ORDER], allowed_extra=("get_user",)), [call("get_order", {"order_id": "W441"}), extra], ctx
    )
    assert v.verdict == "FAIL"
    extra_findings = [f for f in v.findings if f.code == "CALL_EXTRA"]
    assert len(extra_findings) == 1 and why in extra_findings[0].message
    # a schema-invalid extra is also a rung-1 finding, which then dominates the class
    assert v.failure_class == ("PARAM_WRONG_FORMAT" if why == "schema-invalid" else "CALL_EXTRA")


def test_golden_calls_are_matched_before_extra_reads_are_filtered(ctx):
    # get_user is whitelisted, but here it is the golden call: it must be matched, not ignored.
    golden = ("get_user", {"user_id": "U102"}, {})
    calls = [call("get_user", {"user_id": "U101"}, 1), call("get_user", {"user_id": "U102"}, 2)]
    v = judge_case(case([golden]), calls, ctx)
    assert v.verdict == "PASS" and v.ignored == (1,)
    v = judge_case(case([golden]), [call("get_user", {"user_id": "U101"})], ctx)
    assert (v.verdict, v.failure_class) == ("FAIL", "PARAM_WRONG_VALUE")


def test_negative_case_any_non_whitelisted_call_is_unexpected(ctx):
    strict = case(negative=True, allowed_extra=())
    assert judge_case(strict, [], ctx).verdict == "PASS"
    v = judge_case(strict, [call("get_order", {"order_id": "W441"})], ctx)
    assert (v.verdict, v.failure_class, v.settled_at) == ("FAIL", "CALL_UNEXPECTED", 2)
    reads_ok = case(negative=True, allowed_extra=("list_orders",))
    assert judge_case(reads_ok, [call("list_orders", {"user_id": "U101"})], ctx).verdict == "PASS"
    v = judge_case(reads_ok, [call("request_cancel", {"order_id": "W442", "reason": "other"})], ctx)
    assert v.failure_class == "CALL_UNEXPECTED"


@pytest.mark.parametrize(
    ("actual", "expected_class", "settled"),
    [
        (call("get_order", {}), "PARAM_MISSING", 1),
        (call("get_order", '{"order_id": "W441"'), "PARAM_WRONG_FORMAT", 1),
        (call("get_order", {"order_id": "441"}), "PARAM_WRONG_FORMAT", 1),
        (call("get_order", {"order_id": "W499"}), "PARAM_HALLUCINATED_ID", 2),
        (call("get_order", {"order_id": "W442"}), "PARAM_WRONG_VALUE", 2),
        (call("get_product", {"product_id": "P201"}), "TOOL_WRONG", 2),
        (call("get_order_details", {"order_id": "W441"}), "UNKNOWN_TOOL", 1),
    ],
)
def test_failure_classes(ctx, actual, expected_class, settled):
    v = judge_case(case([GET_ORDER]), [actual], ctx)
    assert (v.verdict, v.failure_class, v.settled_at) == ("FAIL", expected_class, settled)


def test_call_missing(ctx):
    v = judge_case(case([GET_ORDER]), [], ctx)
    assert (v.verdict, v.failure_class) == ("FAIL", "CALL_MISSING")


def chain_calls(order=(1, 2), confirm_id="ACT-001"):
    request = call("request_cancel", CANCEL[1], order[0], result={"action_id": "ACT-001"})
    confirm = call("confirm_action", {"action_id": confirm_id}, order[1], result={"status": "confirmed"})
    return sorted([request, confirm], key=lambda c: c.ordinal)


def test_chain_connected_in_order_passes(ctx):
    v = judge_case(case([CANCEL, CONFIRM], order_sensitive=True), chain_calls(), ctx)
    assert v.verdict == "PASS"


def test_chain_order_and_connectivity(ctx):
    d4 = case([CANCEL, CONFIRM], order_sensitive=True)
    v = judge_case(d4, chain_calls(order=(2, 1)), ctx)
    assert (v.verdict, v.failure_class, v.settled_at) == ("FAIL", "ORDER_WRONG", 3)
    assert {f.code for f in v.findings} == {"ORDER_WRONG", "CHAIN_BROKEN"}
    [broken] = [f for f in v.findings if f.code == "CHAIN_BROKEN"]
    assert "no request before it returned its action_id" in broken.message and "None" not in broken.message
    v = judge_case(d4, chain_calls(confirm_id="ACT-002"), ctx)
    assert (v.verdict, v.failure_class, v.settled_at) == ("FAIL", "CHAIN_BROKEN", 3)
    assert "returned 'ACT-001'" in v.explanation


def test_unordered_case_accepts_any_order(ctx):
    golden = [GET_ORDER, ("get_product", {"product_id": "P204"}, {})]
    calls = [call("get_product", {"product_id": "P204"}, 1), call("get_order", {"order_id": "W441"}, 2)]
    assert judge_case(case(golden), calls, ctx).verdict == "PASS"
    assert judge_case(case(golden, order_sensitive=True), calls, ctx).failure_class == "ORDER_WRONG"


def test_skip_and_agent_error_are_not_scored(ctx):
    assert judge_case(case([GET_ORDER], skip=True), [], ctx).verdict == "SKIP"
    v = judge_case(case([GET_ORDER]), [], ctx, agent_error="max_steps")
    assert (v.verdict, v.settled_at) == ("AGENT_ERROR", None)


def test_every_rung_is_reported_even_after_an_early_failure(ctx):
    v = judge_case(case([GET_ORDER]), [call("get_order", {"order_id": "441"})], ctx)
    assert [r.rung for r in v.rungs] == [1, 1, 2, 3, 4, 4, 5]  # schema/invariants, partial credit/state share
    assert v.rungs[-1].status == "skipped"  # a failed trace goes to triage, never to the judge
    by_name = {r.name: r for r in v.rungs}
    assert by_name["schema"].status == "fail" and by_name["partial_credit"].scores["optimal"] == 0.5


def test_golden_arguments_right_but_call_schema_invalid(ctx):
    golden = ("request_cancel", {"order_id": "W442", "reason": "other"}, {})
    actual = call("request_cancel", {"order_id": "W442", "reason": "other", "comment": "x" * 600})
    v = judge_case(case([golden]), [actual], ctx)
    assert (v.verdict, v.failure_class, v.settled_at) == ("FAIL", "PARAM_WRONG_FORMAT", 1)
    partial = next(c for r in v.rungs if r.name == "call_match" for c in r.checks if c.status == "partial")
    assert partial.code == "PARAM_WRONG_FORMAT" and "is longer than 500 characters" in partial.diffs[0].actual


def test_triage_is_a_status_not_a_sentence():
    from traceladder.evaluate.rungs.ladder import settle_results
    from traceladder.evaluate.rungs.types import RungResult

    # A rung that skipped for its own reason counts as having run, whatever its sentence says …
    own = RungResult(1, "schema", "skipped", explanation="a lower rung failed to record any call")
    assert settle_results([own]).verdict == "PASS"
    # … and a triaged rung never settles a verdict, whatever its sentence says.
    triaged = RungResult(5, "judge", "skipped", explanation="sent to triage", triaged=True)
    assert settle_results([triaged]).verdict == "NOT_EVALUATED"


def test_a_triaged_rung_is_marked_by_the_fold(ctx):
    v = judge_case(case([GET_ORDER]), [call("get_order", {"order_id": "441"})], ctx)
    assert [r.name for r in v.rungs if r.triaged] == ["judge"]
