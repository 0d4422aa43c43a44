"""The rungs on their own: seed 2's worked example, comparison rules, properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from traceladder.evaluate.rungs import matching, partial_credit, schema, trajectory
from traceladder.evaluate.rungs.assignment import max_weight_assignment
from traceladder.evaluate.rungs.compare import compare
from traceladder.evaluate.rungs.types import Call, Expected

TOOL_SCHEMAS = {
    "search_flights": {
        "type": "object",
        "properties": {
            "origin": {"type": "string", "pattern": "^[A-Z]{3}$"},
            "destination": {"type": "string", "pattern": "^[A-Z]{3}$"},
            "date": {"type": "string", "format": "date"},
        },
        "required": ["origin", "destination", "date"],
        "additionalProperties": False,
    },
    "book_flight": {
        "type": "object",
        "properties": {"flight_id": {"type": "string"}},
        "required": ["flight_id"],
        "additionalProperties": False,
    },
}
EXPECTED = [
    Expected("search_flights", {"origin": "SFO", "destination": "JFK", "date": "2026-11-02"}),
    Expected("book_flight", {"flight_id": "UA-512"}),
]
ACTUAL = [
    Call("search_flights", {"origin": "SFO", "destination": "JFK", "date": "2026-11-03"}, ordinal=1),
    Call("search_flights", {"origin": "SFO", "destination": "JFK", "date": "2026-11-03"}, ordinal=2),
    Call("book_flight", {"flight_id": "UA-512", "seat": "12A"}, ordinal=3),
]


def seed2_credit(expected: Expected, call: Call) -> float:
    if expected.name != call.name:
        return 0.0
    return 0.5 if matching.arguments_match(expected, call) else 1.0


def test_seed2_worked_example_rung1_flags_seat_only():
    result = schema.check_calls(ACTUAL, schema.SchemaRegistry(TOOL_SCHEMAS))
    assert result.status == "fail"
    # the extra `seat` is PARAM_UNEXPECTED, as rung 2 classifies the same defect
    assert [(f.tool, f.code) for f in result.findings] == [("book_flight", "PARAM_UNEXPECTED")]
    assert "'seat' was unexpected" in result.findings[0].message
    assert [c.code for c in result.checks] == [None, None, "PARAM_UNEXPECTED"]  # 11-03 is a valid date


def test_seed2_worked_example_rung2_rows():
    checks, findings = matching.positional(ACTUAL, EXPECTED)
    rows = [(c.status, c.expected_tool, c.actual_tool) for c in checks]
    assert rows == [
        ("partial", "search_flights", "search_flights"),  # right name, wrong date
        ("wrong_tool", "book_flight", "search_flights"),  # the duplicate pushed the booking out
        ("extra", None, "book_flight"),
    ]
    assert checks[0].diffs[0].param == "date"
    assert {f.code for f in findings} == {"PARAM_WRONG_VALUE", "TOOL_WRONG", "CALL_EXTRA"}


def test_seed2_worked_example_rung3_and_rung4():
    names, want = [c.name for c in ACTUAL], [e.name for e in EXPECTED]
    got = {m: round(trajectory.score(names, want, m), 2) for m in trajectory.MODES}
    assert got == {"strict": 0.33, "unordered": 1.0, "subset": 1.0, "superset": 1.0}
    assert round(partial_credit.positional(ACTUAL, EXPECTED, seed2_credit), 2) == 0.17
    assert round(partial_credit.optimal(ACTUAL, EXPECTED, seed2_credit), 2) == 0.33


def test_format_checking_rejects_impossible_dates():
    registry = schema.SchemaRegistry(TOOL_SCHEMAS)
    bad = Call("search_flights", {"origin": "SFO", "destination": "JFK", "date": "2026-13-45"})
    assert registry.check(bad)[0] == "PARAM_WRONG_FORMAT"
    assert registry.check(Call("fly", {}))[0] == "UNKNOWN_TOOL"
    assert (
        registry.check(Call("book_flight", None, raw='{"flight_id": ', parsed=False))[0]
        == "PARAM_WRONG_FORMAT"
    )
    assert registry.check(Call("book_flight", [1]))[0] == "PARAM_WRONG_FORMAT"


def test_subset_superset_direction_and_partial_scores():
    # seed 2: subset = every expected step happened; superset = every step taken was expected
    assert trajectory.score(["a", "b", "c"], ["a", "b"], "subset") == 1.0
    assert trajectory.score(["a", "b", "c"], ["a", "b"], "superset") == pytest.approx(2 / 3)
    assert trajectory.score(["a"], ["a", "b"], "subset") == 0.5
    assert trajectory.score(["a"], ["a", "b"], "superset") == 1.0
    assert trajectory.score(["b", "a"], ["a", "b"], "strict") == 0.0
    assert trajectory.score(["a"], ["a", "a"], "subset") == 1.0  # sets by default
    assert trajectory.score(["a"], ["a", "a"], "subset", multiset=True) == 0.5
    with pytest.raises(ValueError, match="choose one of strict, unordered, subset, superset"):
        trajectory.score([], [], "loose")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("rule", "expected", "actual", "result"),
    [
        ("exact", 1, 1.0, (True, None)),
        ("exact", True, 1, (False, "PARAM_WRONG_VALUE")),  # booleans are not numbers
        ("exact", [1, 2, 2], [2, 1], (True, None)),  # lists: order-independent sets
        ("exact", {"a": {"b": [1]}}, {"a": {"b": [1.0]}}, (True, None)),
        ("exact", "JFK", "jfk", (False, "PARAM_WRONG_VALUE")),
        ("normalized_str", " Shanghai ", "shanghai", (True, None)),
        ("normalized_str", "上海 ", "上海", (True, None)),
        ("normalized_str", "a-b", "a b", (False, "PARAM_WRONG_VALUE")),  # punctuation stays
        ("normalized_str", {"city": "CN "}, {"city": "cn"}, (True, None)),  # every string leaf
        ("normalized_date", "2026-06-25", "2026-06-25", (True, None)),
        ("normalized_date", "2026-06-25", "2026-06-25T00:00:00", (False, "PARAM_WRONG_VALUE")),
        ("normalized_date", "2026-06-25T10:00:00+02:00", "2026-06-25T08:00:00Z", (True, None)),
        ("normalized_date", "2026-06-25T10:00:00", "2026-06-25T10:00:00Z", (False, "PARAM_WRONG_FORMAT")),
        ("normalized_date", "2026-06-25", "next Tuesday", (False, "PARAM_WRONG_FORMAT")),
        ("contains", "搬家", "因为搬家了", (True, None)),
        ("contains", "搬家", "换工作", (False, "PARAM_WRONG_VALUE")),
        ("any", "ACT-001", "ACT-777", (True, None)),
        ("any", "ACT-001", "", (False, "PARAM_WRONG_VALUE")),
        ("any", "ACT-001", None, (False, "PARAM_WRONG_VALUE")),
    ],
)
def test_param_rules(rule, expected, actual, result):
    assert compare(rule, expected, actual) == result


def test_unknown_rule_lists_the_choices():
    with pytest.raises(ValueError, match="exact, normalized_str, normalized_date, contains, any"):
        compare("fuzzy", 1, 1)


def test_exact_is_the_default_in_every_path():
    """No path normalises silently: " nyc " is not "NYC" unless a rule asks for it, and the same
    two calls compare the same way with or without case rules."""
    actual = Call("f", {"city": " nyc ", "when": "2026-11-02T00:00:00"})
    seed2 = Expected("f", {"city": "NYC", "when": "2026-11-02"})  # no rules: whole object, exact
    case = Expected("f", {"city": "NYC", "when": "2026-11-02"}, {})  # case path, default rule
    for want in (seed2, case):
        diffs = matching.arguments_match(want, actual)
        assert [(d.param, d.rule, d.code) for d in diffs] == [
            ("city", "exact", "PARAM_WRONG_VALUE"),
            ("when", "exact", "PARAM_WRONG_VALUE"),
        ]
    asked = Expected(
        "f", {"city": "NYC", "when": "2026-11-02"}, {"city": "normalized_str", "when": "normalized_date"}
    )
    assert [d.param for d in matching.arguments_match(asked, actual)] == ["when"]  # date ≠ datetime
    assert matching.arguments_match(asked, Call("f", {"city": " nyc ", "when": "2026-11-02"})) == ()


def test_expected_call_defines_the_keys_compared():
    want = Expected("f", {"a": 1}, {})
    assert matching.arguments_match(want, Call("f", {"a": 1, "b": 2})) == ()
    assert [d.code for d in matching.arguments_match(want, Call("f", {}))] == ["PARAM_MISSING"]
    empty = Expected("f", {}, {})
    assert matching.arguments_match(empty, Call("f", {"x": 1})) == ()


def test_optimal_beats_greedy_on_the_peer_bug():
    expected = [Expected("f", {"a": 1}, {}), Expected("f", {"a": 2}, {})]
    actual = [Call("f", {"a": 3}), Call("f", {"a": 1})]
    assert partial_credit.optimal(actual, expected, seed2_credit) == 0.75


def test_assignment_is_optimal_on_rectangles():
    assert max_weight_assignment([[1, 2], [2, 0], [0, 1]]) in ([(0, 1), (1, 0)],)
    assert max_weight_assignment([]) == []
    assert max_weight_assignment([[0, 0]]) == []


call_strategy = st.builds(
    lambda name, a: Call(name, {"a": a}),
    st.sampled_from(["f", "g", "h"]),
    st.integers(min_value=0, max_value=3),
)
expected_strategy = st.builds(
    lambda name, a: Expected(name, {"a": a}, {}),
    st.sampled_from(["f", "g", "h"]),
    st.integers(min_value=0, max_value=3),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(call_strategy, max_size=7), st.lists(expected_strategy, max_size=6), st.randoms())
def test_shuffling_actual_calls_never_changes_order_free_scores(actual, expected, rnd):
    shuffled = list(actual)
    rnd.shuffle(shuffled)
    names, want = [c.name for c in actual], [e.name for e in expected]
    moved = [c.name for c in shuffled]
    for mode in ("unordered", "subset", "superset"):
        for multiset in (False, True):
            assert trajectory.score(names, want, mode, multiset=multiset) == trajectory.score(
                moved, want, mode, multiset=multiset
            )
    assert partial_credit.optimal(actual, expected, seed2_credit) == pytest.approx(
        partial_credit.optimal(shuffled, expected, seed2_credit)
    )
    full = len(matching.pair_calls(actual, expected).full)
    assert full == len(matching.pair_calls(shuffled, expected).full)


@settings(max_examples=200, deadline=None)
@given(st.lists(call_strategy, max_size=6), st.lists(expected_strategy, max_size=6))
def test_optimal_is_at_least_positional_and_bounded(actual, expected):
    best = partial_credit.optimal(actual, expected, seed2_credit)
    assert partial_credit.positional(actual, expected, seed2_credit) <= best + 1e-9
    assert 0.0 <= best <= 1.0


@settings(deadline=None)
@given(
    st.lists(st.sampled_from("abcd"), max_size=6),
    st.lists(st.sampled_from("abcd"), max_size=6),
    st.booleans(),
)
def test_trajectory_scores_at_once_equal_each_mode_alone(actual, expected, multiset):
    # one set of formulas: the four-at-once path can never drift from the per-mode one
    together = trajectory.scores(actual, expected, multiset=multiset)
    assert together == {m: trajectory.score(actual, expected, m, multiset=multiset) for m in trajectory.MODES}
