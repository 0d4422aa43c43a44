"""Rung 4 — tool-call accuracy with partial credit. Needs a case.

Each pair earns 1.0 when name and arguments match, 0.5 when only the name matches, 0 otherwise;
the total is divided by the longer of the two lists, so missing and extra calls cost points.

  positional  pairs by position (seed 2's code: 0.17 on its worked example)
  optimal     the best one-to-one assignment (0.33 there) — never greedy, so shuffling the actual
              calls can never change it

The optimal score is rung 2's pairing read again whenever the two weigh pairs alike: the pairing
maximises 2 per full match and 1 per name-only match, credit is the same weights halved, except
that a full match also needs a schema-valid call. So unless some same-name pair has no argument
difference on a schema-invalid call (credit 1.0, pairing weight 1), the pairing's weight halved
*is* the optimum, and no second assignment runs (decision 650).
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

    best = _from_pairing(a, len(judged))
    at = positional(judged, a.expected, credit)
    return _result((at, optimal(judged, a.expected, credit) if best is None else best))


# The rung's result is a function of its two scores, and traces repeat few of them: one object per
# pair of scores, so its row is built once (`rows.RowBuilder` builds a row per distinct result).
_RESULTS: dict[tuple[float, float], RungResult] = {}


def _result(score: tuple[float, float]) -> RungResult:
    """The result of (positional, optimal) scores."""
    found = _RESULTS.get(score)
    if found is None:
        at, best = score
        if len(_RESULTS) >= 10_000:
            _RESULTS.clear()
        found = _RESULTS[score] = RungResult(
            NUMBER,
            NAME,
            "pass" if best == 1.0 else "fail",
            {"positional": at, "optimal": best},
            explanation=f"tool-call accuracy {best:.2f} (positional {at:.2f})",
        )
    return found


def _from_pairing(a: Analysis, judged: int) -> float | None:
    """The optimal score read from rung 2's pairing, or None when the two weigh some pair apart.

    Every expected call fully matched is the most any pairing can score, under either weighing.
    Otherwise the pairing compared every same-name pair (`Analysis.diffs` keeps each), and the
    weighings differ only on a pair with no argument difference whose call is schema-invalid.
    The ignored calls are unpaired, so the optimum over the judged calls is the same. Sums of
    0.5 and 1.0 are exact, so the value is the assignment's to the last bit."""
    pairing, expected = a.match.pairing, len(a.expected)
    longer = max(judged, expected)
    if not longer:
        return 1.0
    full, partial = len(pairing.full), len(pairing.partial)
    if full == expected:
        return full / longer
    if any(not diffs and not a.valid(j) for (_, j), diffs in a.compared.items()):
        return None
    return (full + 0.5 * partial) / longer
