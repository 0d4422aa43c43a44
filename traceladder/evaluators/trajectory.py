"""Rung 3 — trajectory: does the sequence of tool names follow the expected path?

Seed 2's definitions (which are the *opposite* of agentevals' subset/superset naming):

  strict     in-order prefix match, divided by the longer list; passes only when identical
  unordered  Jaccard overlap of the two sets; passes when the sets are equal
  subset     every expected step happened (expected ⊆ actual); partial score = recall
  superset   every step taken was expected (actual ⊆ expected); partial score = precision

Set semantics by default (reproduces seed 2's worked example: duplicates and order are invisible
to the three looser modes); `multiset=True` counts duplicates.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Literal

Mode = Literal["strict", "unordered", "subset", "superset"]
MODES: tuple[Mode, ...] = ("strict", "unordered", "subset", "superset")


def _bags(
    actual: Sequence[str], expected: Sequence[str], multiset: bool
) -> tuple[Counter[str], Counter[str]]:
    if multiset:
        return Counter(actual), Counter(expected)
    return Counter(set(actual)), Counter(set(expected))


def score(actual: Sequence[str], expected: Sequence[str], mode: Mode, *, multiset: bool = False) -> float:
    """The partial score of one mode in [0, 1]; 1.0 means the mode passes."""
    if mode == "strict":
        if list(actual) == list(expected):
            return 1.0
        prefix = 0
        for got, want in zip(actual, expected, strict=False):
            if got != want:
                break
            prefix += 1
        return prefix / max(len(actual), len(expected), 1)
    if multiset:
        a, e = _bags(actual, expected, multiset)
        overlap, union, n_actual, n_expected = (
            sum((a & e).values()),
            sum((a | e).values()),
            sum(a.values()),
            sum(e.values()),
        )
    else:
        sa, se = set(actual), set(expected)
        overlap, union, n_actual, n_expected = len(sa & se), len(sa | se), len(sa), len(se)
    if mode == "unordered":
        return overlap / union if union else 1.0
    if mode == "subset":  # expected ⊆ actual: recall
        return overlap / n_expected if n_expected else 1.0
    if mode == "superset":  # actual ⊆ expected: precision
        return overlap / n_actual if n_actual else 1.0
    raise ValueError(f"unknown trajectory mode {mode!r}; choose one of {', '.join(MODES)}")


def scores(actual: Sequence[str], expected: Sequence[str], *, multiset: bool = False) -> dict[str, float]:
    """All four modes at once, keyed by mode name."""
    return {mode: score(actual, expected, mode, multiset=multiset) for mode in MODES}


def passes(actual: Sequence[str], expected: Sequence[str], mode: Mode, *, multiset: bool = False) -> bool:
    return score(actual, expected, mode, multiset=multiset) == 1.0
