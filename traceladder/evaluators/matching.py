"""Comparing expected calls with actual ones: argument diffs and the optimal one-to-one pairing.

`CompiledExpected` compiles an expected call's comparison once (its rules, its canonical values);
`pair_calls` finds the pairing of expected to actual calls that maximises 2 per full match and 1
per name-only match — never greedy, so the order of the actual calls cannot change the result.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import zip_longest
from typing import Any

from traceladder.evaluators.assignment import max_weight_assignment
from traceladder.evaluators.classes import dominant
from traceladder.evaluators.compare import Matcher, compile_rule, exact_equal
from traceladder.evaluators.types import ArgDiff, Call, CallCheck, Expected, Finding

# Refines a parameter difference (→ PARAM_WRONG_FORMAT / PARAM_HALLUCINATED_ID), given the call,
# the parameter and its actual value; None leaves the comparison's own code.
Classifier = Callable[[Call, str, Any], str | None]


@dataclass(frozen=True)
class CompiledExpected:
    """An expected call with its per-parameter matchers built once."""

    expected: Expected
    matchers: tuple[tuple[str, str, Any, Matcher], ...]  # (param, rule, expected value, matcher)

    @staticmethod
    def of(expected: Expected) -> CompiledExpected:
        if expected.rules is None:
            return CompiledExpected(expected, ())
        return CompiledExpected(
            expected,
            tuple(
                (key, rule, want, compile_rule(rule, want))
                for key, want in expected.arguments.items()
                for rule in (expected.rules.get(key, "exact"),)
            ),
        )

    @property
    def name(self) -> str:
        return self.expected.name

    def diffs(self, call: Call, classify: Classifier | None = None) -> tuple[ArgDiff, ...]:
        """Every argument difference (empty tuple = match). Names are not compared here."""
        want_args = self.expected.arguments
        if not call.parsed or not isinstance(call.arguments, dict):
            shown = call.raw if not call.parsed else call.arguments
            return (ArgDiff("(arguments)", want_args, shown, "json object", "PARAM_WRONG_FORMAT"),)
        actual = call.arguments
        diffs: list[ArgDiff] = []
        if self.expected.rules is None:  # seed 2: the whole object, exact
            for key in sorted(set(want_args) | set(actual)):
                if key not in actual:
                    diffs.append(ArgDiff(key, want_args[key], None, "exact", "PARAM_MISSING"))
                elif key not in want_args:
                    diffs.append(ArgDiff(key, None, actual[key], "exact", "PARAM_UNEXPECTED"))
                elif not exact_equal(want_args[key], actual[key]):
                    # the same refinement as the rules path: a bad format or an unknown fixture id
                    refined = classify(call, key, actual[key]) if classify else None
                    diffs.append(
                        ArgDiff(key, want_args[key], actual[key], "exact", refined or "PARAM_WRONG_VALUE")
                    )
            return tuple(diffs)
        for key, rule, want, matcher in self.matchers:
            if key not in actual:
                diffs.append(ArgDiff(key, want, None, rule, "PARAM_MISSING"))
                continue
            got = actual[key]
            ok, code = matcher(got)
            refined = classify(call, key, got) if classify else None
            if refined == "PARAM_WRONG_FORMAT" or (not ok and refined):
                code, ok = refined, False
            if not ok:
                diffs.append(ArgDiff(key, want, got, rule, code))
        return tuple(diffs)


def arguments_match(
    expected: Expected, call: Call, classify: Classifier | None = None
) -> tuple[ArgDiff, ...]:
    """Every argument difference between one expected and one actual call (empty = match)."""
    return CompiledExpected.of(expected).diffs(call, classify)


def call_code(diffs: Sequence[ArgDiff]) -> str | None:
    """The call-level failure class: the highest-priority parameter class present."""
    return dominant(d.code for d in diffs)


@dataclass(frozen=True)
class Pairing:
    """The optimal pairing of expected calls to actual calls (indices into the two lists)."""

    full: tuple[tuple[int, int], ...]  # name and arguments match
    partial: tuple[tuple[int, int, tuple[ArgDiff, ...]], ...]  # name only
    order_respected: bool  # an optimal pairing exists that keeps expected order


def pair_calls(
    actual: Sequence[Call],
    expected: Sequence[Expected | CompiledExpected],
    *,
    valid: Callable[[int], bool] = lambda j: True,
    compare: Callable[[int, int], tuple[ArgDiff, ...]] | None = None,
) -> Pairing:
    """Pair each expected call with at most one actual call, maximising 2 per full match and 1 per
    name-only match. A full match also needs a schema-valid call (`valid(j)`). Order is then
    checked without changing the score: if some optimal pairing keeps the expected order, it is
    used. `compare(i, j)` gives the argument diffs of expected i and actual j."""
    compiled = [e if isinstance(e, CompiledExpected) else CompiledExpected.of(e) for e in expected]

    def compared(i: int, j: int) -> tuple[ArgDiff, ...]:
        return compare(i, j) if compare else compiled[i].diffs(actual[j])

    return _in_order(actual, compiled, valid, compared) or _optimal(actual, compiled, valid, compared)


def _in_order(
    actual: Sequence[Call],
    compiled: Sequence[CompiledExpected],
    valid: Callable[[int], bool],
    compared: Callable[[int, int], tuple[ArgDiff, ...]],
) -> Pairing | None:
    """The fast path, for the common trace that made every expected call, in order (extra calls
    around them allowed): each expected call paired with the earliest full match after the
    previous one, or None when some expected call has none. Its pairing is the one `_optimal`
    returns: every expected call fully matched scores 2 each, the most possible, and among such
    pairings `_best_ordered`'s walk takes, for each expected call in turn, the earliest full match
    that leaves the rest matchable — which the earliest full match always does (a later one
    leaves fewer calls to the rest). `tests/evaluators/test_pairing.py` checks the two agree."""
    pairs: list[tuple[int, int]] = []
    j, n = 0, len(actual)
    for i, e in enumerate(compiled):
        name = e.name
        while j < n and not (actual[j].name == name and not compared(i, j) and valid(j)):
            j += 1
        if j == n:
            return None
        pairs.append((i, j))
        j += 1
    return Pairing(tuple(pairs), (), True)


def _optimal(
    actual: Sequence[Call],
    compiled: Sequence[CompiledExpected],
    valid: Callable[[int], bool],
    compared: Callable[[int, int], tuple[ArgDiff, ...]],
) -> Pairing:
    """The general path: every same-name pair compared, the optimal assignment, then order."""
    diffs = [
        [compared(i, j) if e.name == a.name else None for j, a in enumerate(actual)]
        for i, e in enumerate(compiled)
    ]
    weights = [
        [0.0 if d is None else (2.0 if not d and valid(j) else 1.0) for j, d in enumerate(row)]
        for row in diffs
    ]
    best = max_weight_assignment(weights)
    if len(compiled) <= 1:  # one expected call: its best pair is trivially in order
        chosen, respected = best, True
    else:
        total = sum(weights[i][j] for i, j in best)
        ordered = _best_ordered(weights)
        respected = sum(weights[i][j] for i, j in ordered) == total
        chosen = ordered if respected else best
    full = tuple((i, j) for i, j in chosen if weights[i][j] == 2.0)
    partial = tuple((i, j, diffs[i][j] or ()) for i, j in chosen if weights[i][j] == 1.0)
    return Pairing(full, partial, respected)


def _best_ordered(weights: list[list[float]]) -> list[tuple[int, int]]:
    """The heaviest pairing whose actual indices increase with expected indices (an LCS-style DP)."""
    rows = len(weights)
    cols = len(weights[0]) if rows else 0
    best = [[0.0] * (cols + 1) for _ in range(rows + 1)]
    for i in range(rows - 1, -1, -1):
        for j in range(cols - 1, -1, -1):
            take = weights[i][j] + best[i + 1][j + 1] if weights[i][j] > 0 else 0.0
            best[i][j] = max(take, best[i + 1][j], best[i][j + 1])
    pairs, i, j = [], 0, 0
    while i < rows and j < cols:
        if weights[i][j] > 0 and best[i][j] == weights[i][j] + best[i + 1][j + 1]:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif best[i][j] == best[i + 1][j]:
            i += 1
        else:
            j += 1
    return pairs


def positional(
    actual: Sequence[Call], expected: Sequence[Expected]
) -> tuple[tuple[CallCheck, ...], tuple[Finding, ...]]:
    """Seed 2's rows: per position, name match and exact match; missing and extra calls are rows
    of their own (its worked example reads these)."""
    checks: list[CallCheck] = []
    findings: list[Finding] = []
    for index, (got, want) in enumerate(zip_longest(actual, expected)):
        if got is None or want is None:
            status = "missing" if got is None else "extra"
            code = "CALL_MISSING" if got is None else "CALL_EXTRA"
            message = f"position {index + 1}: {status} call"
            checks.append(
                CallCheck(status, index if want else None, want.name if want else None,
                          got.ordinal if got else None, got.name if got else None, code, message=message)
            )  # fmt: skip
            findings.append(
                Finding(2, code, message, want.name if want is not None else got.name if got else None)
            )
            continue
        if got.name != want.name:
            message = f"position {index + 1}: expected {want.name}, got {got.name}"
            checks.append(
                CallCheck(
                    "wrong_tool", index, want.name, got.ordinal, got.name, "TOOL_WRONG", message=message
                )
            )
            findings.append(Finding(2, "TOOL_WRONG", message, got.name, expected=want.name, actual=got.name))
            continue
        diffs = arguments_match(want, got)
        message = f"position {index + 1}: {want.name} " + (
            "exact match" if not diffs else "name matches, arguments differ"
        )
        checks.append(
            CallCheck("match" if not diffs else "partial", index, want.name, got.ordinal, got.name,
                      call_code(diffs), diffs, message)
        )  # fmt: skip
        findings += [
            Finding(2, d.code or "", message, got.name, d.param, d.expected, d.actual) for d in diffs
        ]
    return tuple(checks), tuple(findings)
