"""The invariants rung (open-path checks for live traces) and its policy data (the TOML file: test_policy_file.py)."""

from __future__ import annotations

import math
import pickle
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from traceladder.evaluate.rungs import invariants
from traceladder.evaluate.rungs.inputs import TraceInputs
from traceladder.evaluate.rungs.ladder import Ladder
from traceladder.evaluate.rungs.policy import Confirmation, ParamRule, Policy
from traceladder.evaluate.rungs.types import Call
from traceladder.trace_facts import TraceFacts

CODES = {
    "FORBIDDEN_TOOL", "TOOL_NOT_ALLOWED", "TOO_MANY_TURNS", "TOO_MANY_TOOL_CALLS", "DUPLICATE_CALL",
    "UNCONFIRMED_ACTION", "PARAM_PATTERN", "TOOL_ERRORS", "SLOW_TRACE",
}  # fmt: skip


def trace(*calls: str | tuple) -> tuple[Call, ...]:
    """Calls numbered from 1: a name, or (name, arguments[, ok])."""
    out = []
    for ordinal, spec in enumerate(calls, 1):
        name, arguments, ok = (spec, {}, True) if isinstance(spec, str) else (*spec, True)[:3]
        out.append(Call(name, arguments, ok=ok, ordinal=ordinal))
    return tuple(out)


def judge(policy: Policy, calls=(), **facts):
    inputs = TraceInputs("ab" * 16, tuple(calls), policy=policy, facts=TraceFacts(**facts))
    return invariants.evaluate(inputs, None)


def only(result):
    assert result.status == "fail", result.explanation
    assert len(result.findings) == 1, result.findings
    return result.findings[0]


# --- each check, passing and failing ---------------------------------------------------------------


def test_forbidden_tool_by_glob():
    policy = Policy(forbidden_tools=("delete_*", "drop_table"))
    assert judge(policy, trace("get_user", "undelete_x", "drop_tables")).status == "pass"
    found = only(judge(policy, trace("get_user", "delete_account")))
    assert found[1:] == (
        "FORBIDDEN_TOOL",
        found.message,
        "delete_account",
        None,
        "delete_*",
        "delete_account",
        2,
    )
    assert found.rung == 1 and "forbidden tool delete_account (call 2)" in found.message


def test_allowed_tools_globs_are_case_sensitive_fnmatch():
    policy = Policy(allowed_tools=("get_*", "confirm_actio?", "list_[ou]*"))
    assert judge(policy, trace("get_order", "confirm_action", "list_orders", "list_users")).status == "pass"
    result = judge(policy, trace("get_order", "Get_order", "forget_order", "list_products"))
    assert [(f.code, f.tool, f.ordinal) for f in result.findings] == [
        ("TOOL_NOT_ALLOWED", "Get_order", 2),
        ("TOOL_NOT_ALLOWED", "forget_order", 3),
        ("TOOL_NOT_ALLOWED", "list_products", 4),
    ]
    assert result.findings[0].expected == ["get_*", "confirm_actio?", "list_[ou]*"]
    assert result.findings[0].actual == "Get_order"


def test_forbidden_wins_over_not_allowed_and_empty_allow_list_allows_nothing():
    found = only(judge(Policy(allowed_tools=("get_*",), forbidden_tools=("delete_*",)), trace("delete_x")))
    assert found.code == "FORBIDDEN_TOOL"
    assert only(judge(Policy(allowed_tools=()), trace("get_order"))).code == "TOOL_NOT_ALLOWED"
    assert judge(Policy(allowed_tools=()), ()).status == "pass"


def test_max_turns():
    policy = Policy(max_turns=3)
    assert judge(policy, model_turns=3).status == "pass"
    found = only(judge(policy, model_turns=4))
    assert (found.code, found.expected, found.actual, found.tool, found.ordinal) == (
        "TOO_MANY_TURNS",
        3,
        4,
        None,
        None,
    )


def test_max_tool_calls_points_at_the_first_call_over_the_limit():
    policy = Policy(max_tool_calls=2)
    assert judge(policy, trace("a", "b")).status == "pass"
    found = only(judge(policy, trace("a", "b", "c", "d")))
    assert (found.code, found.expected, found.actual, found.ordinal) == ("TOO_MANY_TOOL_CALLS", 2, 4, 3)
    assert only(judge(Policy(max_tool_calls=0), trace("a"))).ordinal == 1


def test_duplicate_calls_ignore_key_order():
    policy = Policy(forbid_duplicate_calls=True)
    calls = trace(
        ("search", {"origin": "SFO", "dest": {"city": "NYC", "airport": "JFK"}}),
        ("search", {"origin": "SFO", "dest": {"city": "LAX"}}),
        ("book", {"dest": {"airport": "JFK", "city": "NYC"}, "origin": "SFO"}),
        ("search", {"dest": {"airport": "JFK", "city": "NYC"}, "origin": "SFO"}),
    )
    found = only(judge(policy, calls))
    assert (found.code, found.tool, found.ordinal, found.expected) == ("DUPLICATE_CALL", "search", 4, 1)
    assert found.actual == calls[3].arguments and "call 4 repeats call 1" in found.message


def test_duplicate_values_compare_as_json():
    policy = Policy(forbid_duplicate_calls=True)
    distinct = [{"a": 1}, {"a": 1.0}, {"a": True}, {"a": "1"}, {"a": None}, {"a": math.nan}, {"a": [1, 2]},
                {"a": [2, 1]}, {"a": 2**80}, {"a": -math.inf}]  # fmt: skip
    assert judge(policy, trace(*[("t", d) for d in distinct])).status == "pass"
    for value in distinct:
        assert only(judge(policy, trace(("t", value), ("t", dict(value))))).ordinal == 2


def test_duplicate_unparsable_arguments_compare_by_raw_text():
    policy = Policy(forbid_duplicate_calls=True)
    bad = [
        Call("t", None, raw='{"a": 1', ordinal=1, parsed=False),
        Call("t", None, raw='{"a":1', ordinal=2, parsed=False),
    ]
    assert judge(policy, bad).status == "pass"
    again = Call("t", None, raw='{"a": 1', ordinal=3, parsed=False)
    found = only(judge(policy, [*bad, again]))
    assert (found.ordinal, found.expected, found.actual) == (3, 1, '{"a": 1')
    # A parsed call never equals an unparsed one, even with the same text.
    assert judge(policy, [Call("t", {"a": 1}, raw='{"a": 1', ordinal=1), bad[0]]).status == "pass"


def test_confirmation_followed_passes():
    policy = Policy(confirm=(Confirmation("request_*", ("confirm_action", "abort_*")),))
    assert judge(policy, trace("get_order", "request_refund", "get_user", "confirm_action")).status == "pass"
    assert judge(policy, trace("request_refund", "abort_action")).status == "pass"
    # One confirmation settles every earlier request of its rule.
    assert judge(policy, trace("request_refund", "request_cancel", "confirm_action")).status == "pass"


def test_confirmation_missing_or_only_before_fails():
    policy = Policy(confirm=(Confirmation("request_*", ("confirm_action", "abort_action")),))
    found = only(judge(policy, trace("get_order", "request_refund", "get_user")))
    assert (found.code, found.tool, found.ordinal) == ("UNCONFIRMED_ACTION", "request_refund", 2)
    assert found.expected == ["confirm_action", "abort_action"]
    before = only(judge(policy, trace("confirm_action", "request_refund")))
    assert before.ordinal == 2 and "confirm_action at call 1 came before it" in before.message
    result = judge(policy, trace("request_a", "confirm_action", "request_b"))
    assert [(f.tool, f.ordinal) for f in result.findings] == [("request_b", 3)]


def test_a_call_never_confirms_itself():
    policy = Policy(confirm=(Confirmation("*_action", ("*_action",)),))
    assert only(judge(policy, trace("confirm_action"))).code == "UNCONFIRMED_ACTION"
    # Each call confirms the one before; the last is itself a request nobody confirmed.
    assert only(judge(policy, trace("request_action", "confirm_action", "abort_action"))).ordinal == 3


def test_param_pattern_is_a_full_match():
    policy = Policy(parameters=(ParamRule("request_*", "order_id", re.compile(r"#W\d{7}")),))
    assert judge(policy, trace(("request_refund", {"order_id": "#W1234567"}))).status == "pass"
    found = only(judge(policy, trace("get_user", ("request_cancel", {"order_id": "#W1234567x"}))))
    assert found[1:] == (
        "PARAM_PATTERN",
        found.message,
        "request_cancel",
        "order_id",
        r"#W\d{7}",
        "#W1234567x",
        2,
    )
    # Another tool, a missing parameter, arguments that are not an object: not this check's business.
    other = trace(("get_order", {"order_id": "x"}), ("request_refund", {}), ("request_refund", [1]))
    assert judge(policy, other).status == "pass"


def test_param_pattern_matches_non_strings_on_their_json_text():
    def rule(pattern):
        return Policy(parameters=(ParamRule("t", "p", re.compile(pattern)),))

    assert judge(rule(r"\d+"), trace(("t", {"p": 25}))).status == "pass"
    assert judge(rule("true|false"), trace(("t", {"p": True}))).status == "pass"
    assert judge(rule("null"), trace(("t", {"p": None}))).status == "pass"
    assert judge(rule(r'\{"a":1,"b":2\}'), trace(("t", {"p": {"b": 2, "a": 1}}))).status == "pass"
    found = only(judge(rule(r"\d+"), trace(("t", {"p": 2.5}))))
    assert (found.actual, found.param) == (2.5, "p") and "'2.5'" in found.message


def test_tool_errors_count_over_the_whole_trace():
    policy = Policy(max_tool_errors=2)
    assert judge(policy, trace(("a", {}, False), ("b", {}, False), "c")).status == "pass"
    found = only(judge(policy, trace(("a", {}, False), "ok", ("b", {}, False), ("a", {}, False))))
    assert (found.code, found.expected, found.actual, found.ordinal, found.tool) == (
        "TOOL_ERRORS",
        2,
        3,
        4,
        None,
    )
    assert "a ×2, b ×1" in found.message
    same = only(judge(Policy(max_tool_errors=0), trace(("a", {}, False))))
    assert same.tool == "a"


def test_slow_trace_and_unknown_duration():
    policy = Policy(max_latency_ms=1000, max_tool_calls=5)
    assert judge(policy, duration_ms=1000.0).status == "pass"
    found = only(judge(policy, duration_ms=1500.5))
    assert (found.code, found.expected, found.actual) == ("SLOW_TRACE", 1000, 1500.5)
    unknown = judge(policy, duration_ms=None)
    assert unknown.status == "pass" and unknown.scores["checked"] == 1
    assert (
        unknown.explanation == "1 invariant held; max_latency_ms not checked: the trace's duration is unknown"
    )
    alone = judge(Policy(max_latency_ms=1000), duration_ms=None)
    assert alone.status == "not_evaluated" and "duration is unknown" in alone.explanation


def test_explanations_and_scores():
    policy = Policy(
        forbidden_tools=("delete_*",), forbid_duplicate_calls=True, max_turns=9, source="defaults"
    )
    held = judge(policy, trace("a", "b"))
    assert held.explanation == "3 invariants held (defaults)" and held.scores == {
        "violations": 0,
        "checked": 3,
    }
    result = judge(policy, trace("delete_account", "a", "a"))
    assert result.explanation == (
        "2 violations: forbidden tool delete_account (call 1) matches 'delete_*'; duplicate call a (call 3 repeats call 2)"
    )
    many = judge(Policy(forbidden_tools=("*",)), trace(*"abcdefg"))
    assert many.explanation.endswith("; and 2 more") and len(many.findings) == 7


def test_a_policy_with_no_check_is_not_evaluated():
    result = judge(Policy(confirm=(), forbid_duplicate_calls=False), trace("a"))
    assert result.status == "not_evaluated" and "enables no check" in result.explanation
    assert invariants.evaluate(TraceInputs("t", (), policy="nonsense"), None).status == "not_evaluated"


def test_through_the_real_ladder():
    ladder = Ladder((invariants,))
    inputs = TraceInputs(
        "t", trace("request_refund"), policy=Policy(confirm=(Confirmation("request_*", ("ok",)),))
    )
    verdict = ladder.settle(inputs)
    assert (verdict.verdict, verdict.failure_class, verdict.settled_by) == (
        "FAIL",
        "UNCONFIRMED_ACTION",
        "invariants",
    )
    absent = ladder.settle(TraceInputs("t", trace("a")))
    assert absent.verdict == "NOT_EVALUATED" and "no invariant policy" in absent.explanation


def test_policy_pickles_and_keeps_behaving():
    policy = Policy(allowed_tools=("get_*",), parameters=(ParamRule("get_*", "id", re.compile(r"\d+")),))
    judge(policy, trace("get_x"))  # fill the memo
    copy = pickle.loads(pickle.dumps(policy))
    assert copy == policy
    assert (
        judge(copy, trace(("get_x", {"id": "x"}), "put_y")).findings
        == judge(policy, trace(("get_x", {"id": "x"}), "put_y")).findings
    )


# --- never raises ----------------------------------------------------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=10,
)
GARBAGE = JSON | st.sets(st.integers(), max_size=2) | st.dictionaries(st.integers(), JSON, max_size=2)
CALLS = st.lists(
    st.builds(
        Call,
        name=st.sampled_from(["request_x", "confirm_action", "get_y", "delete_z", ""]) | st.text(max_size=4)
        | st.none() | st.integers(),
        arguments=GARBAGE,
        raw=st.none() | st.text(max_size=8) | st.integers(),
        ok=st.booleans() | st.none(),
        ordinal=st.integers() | st.none(),
        parsed=st.booleans(),
        result=st.none(),
        result_raw=st.none(),
    ),
    max_size=12,
)  # fmt: skip
EVERYTHING = Policy(
    allowed_tools=("get_*", "request_*", "confirm_*"), forbidden_tools=("delete_*",), max_turns=2, max_tool_calls=5,
    forbid_duplicate_calls=True, max_tool_errors=1, max_latency_ms=10.0,
    confirm=(Confirmation("request_*", ("confirm_*",)), Confirmation("*", ())),
    parameters=(ParamRule("*", "a", re.compile("x+")), ParamRule("*", "", re.compile(".*"))),
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(calls=CALLS, turns=st.integers(-5, 5), duration=st.none() | st.floats())
def test_random_calls_never_raise(calls, turns, duration):
    result = judge(EVERYTHING, calls, model_turns=turns, duration_ms=duration)
    assert result.status in ("pass", "fail", "not_evaluated")
    assert {f.code for f in result.findings} <= CODES
    assert result.scores["violations"] == len(result.findings)


@settings(max_examples=100, deadline=None)
@given(arguments=st.dictionaries(st.text(max_size=4), JSON, min_size=2, max_size=6), data=st.data())
def test_duplicates_never_depend_on_key_order(arguments, data):
    keys = data.draw(st.permutations(list(arguments)))
    reordered = {key: arguments[key] for key in keys}
    findings = judge(Policy(forbid_duplicate_calls=True), trace(("t", arguments), ("t", reordered))).findings
    has_nan = "nan" in repr(arguments)  # NaN is not equal to itself, in JSON text as anywhere
    assert has_nan or [f.ordinal for f in findings] == [2]


def test_huge_trace_is_linear_and_fine():
    calls = tuple(Call("request_x", {"a": "y"}, ok=False, ordinal=i) for i in range(20_000))
    result = judge(EVERYTHING, calls)
    assert result.status == "fail" and len(result.findings) > 20_000
