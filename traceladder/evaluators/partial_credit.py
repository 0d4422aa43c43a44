"""Rung 4 — tool-call accuracy with partial credit.

Each pair earns 1.0 when name and arguments match, 0.5 when only the name matches, 0 otherwise;
the total is divided by the longer of the two lists, so missing and extra calls cost points.

  positional  pairs by position (seed 2's code: 0.17 on its worked example)
  optimal     the best one-to-one assignment (0.33 there) — never greedy, so shuffling the actual
              calls can never change it
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from traceladder.evaluators.assignment import max_weight_assignment
from traceladder.evaluators.types import Call, Expected

Credit = Callable[[Expected, Call], float]


def positional(actual: Sequence[Call], expected: Sequence[Expected], credit: Credit) -> float:
    total = sum(credit(e, a) for a, e in zip(actual, expected, strict=False))
    return total / max(len(actual), len(expected), 1) if (actual or expected) else 1.0


def optimal(actual: Sequence[Call], expected: Sequence[Expected], credit: Credit) -> float:
    if not actual and not expected:
        return 1.0
    weights = [[credit(e, a) for a in actual] for e in expected]
    pairs = max_weight_assignment(weights)
    return sum(weights[i][j] for i, j in pairs) / max(len(actual), len(expected))
