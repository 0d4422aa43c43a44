"""Rung 4 — tool-call accuracy with partial credit. Needs a case.

Each pair earns 1.0 when name and arguments match, 0.5 when only the name matches, 0 otherwise;
the total is divided by the longer of the two lists, so missing and extra calls cost points.

  positional  pairs by position (seed 2's code: 0.17 on its worked example)
  optimal     the best one-to-one assignment (0.33 there) — never greedy, so shuffling the actual
              calls can never change it
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from traceladder.evaluate.rungs.analysis import Analysis
from traceladder.evaluate.rungs.assignment import max_weight_assignment
from traceladder.evaluate.rungs.inputs import TraceInputs
from traceladder.evaluate.rungs.types import Call, RungResult

NUMBER = 4
NAME = "partial_credit"
NEEDS = frozenset({"case"})
SURVIVORS_ONLY = False

# credit(expected, actual) for one pair: 1.0, 0.5 or 0.
Credit = Callable[[Any, Call], float]


def positional(actual: Sequence[Call], expected: Sequence[Any], credit: Credit) -> float:
    total = sum(credit(e, a) for a, e in zip(actual, expected, strict=False))
    return total / max(len(actual), len(expected), 1) if (actual or expected) else 1.0


def optimal(actual: Sequence[Call], expected: Sequence[Any], credit: Credit) -> float:
    if not actual and not expected:
        return 1.0
    weights = [[credit(e, a) for a in actual] for e in expected]
    pairs = max_weight_assignment(weights)
    return sum(weights[i][j] for i, j in pairs) / max(len(actual), len(expected))


def evaluate(inputs: TraceInputs, analysis: Analysis) -> RungResult:
    a = analysis
    judged = a.match.judged
    index = {id(call): j for j, call in enumerate(a.calls)}
    position = {id(e): i for i, e in enumerate(a.expected)}

    def credit(expected: Any, call: Call) -> float:
        if expected.name != call.name:
            return 0.0
        return 0.5 if a.diffs(position[id(expected)], index[id(call)]) else 1.0

    values = {
        "positional": positional(judged, a.expected, credit),
        "optimal": optimal(judged, a.expected, credit),
    }
    return RungResult(
        NUMBER,
        NAME,
        "pass" if values["optimal"] == 1.0 else "fail",
        values,
        explanation=f"tool-call accuracy {values['optimal']:.2f} (positional {values['positional']:.2f})",
    )
