"""The pairing's fast path (every expected call fully matched, in order) gives exactly the
pairing of the general path (every pair compared, optimal assignment, then order), on randomized
call lists — most of them built to take the fast path, the rest to fall back from it."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from traceladder.evaluate.rungs import matching
from traceladder.evaluate.rungs.matching import CompiledExpected, pair_calls
from traceladder.evaluate.rungs.types import Call, Expected

TOOLS = ("get_order", "get_user", "cancel_order", "refund")


def _lists(seed: int) -> tuple[list[Call], list[CompiledExpected], frozenset[int]]:
    rng = random.Random(seed)
    expected = [
        Expected(rng.choice(TOOLS), {"id": rng.randrange(3)}, None if rng.random() < 0.3 else {})
        for _ in range(rng.randrange(0, 5))
    ]
    actual: list[Call] = []
    for e in expected:  # the expected calls in order, each sometimes perturbed, extras between
        while rng.random() < 0.4:
            actual.append(Call(rng.choice(TOOLS), {"id": rng.randrange(3)}))
        roll = rng.random()
        if roll < 0.75:
            actual.append(Call(e.name, dict(e.arguments)))
        elif roll < 0.85:
            actual.append(Call(e.name, {"id": 9}))  # the name only
        elif roll < 0.9:
            actual.append(Call(e.name, None, "{", parsed=False))
    while rng.random() < 0.3:
        actual.append(Call(rng.choice(TOOLS), {"id": rng.randrange(3)}))
    if rng.random() < 0.2:
        rng.shuffle(actual)
    invalid = frozenset(j for j in range(len(actual)) if rng.random() < 0.1)
    return actual, [CompiledExpected.of(e) for e in expected], invalid


@settings(max_examples=3000, deadline=None)
@given(st.integers(0, 2**32))
def test_the_fast_path_pairs_exactly_as_the_general_path(seed):
    actual, expected, invalid = _lists(seed)

    def valid(j: int) -> bool:
        return j not in invalid

    def compared(i: int, j: int):
        return expected[i].diffs(actual[j])

    general = matching._optimal(actual, expected, valid, compared)
    assert pair_calls(actual, expected, valid=valid) == general


def test_both_paths_are_exercised():
    taken = fell_back = 0
    for seed in range(2000):
        actual, expected, invalid = _lists(seed)
        fast = matching._in_order(
            actual,
            expected,
            lambda j, invalid=invalid: j not in invalid,
            lambda i, j, e=expected, a=actual: e[i].diffs(a[j]),
        )
        taken += fast is not None and bool(expected)
        fell_back += fast is None
    assert taken > 500 and fell_back > 300
