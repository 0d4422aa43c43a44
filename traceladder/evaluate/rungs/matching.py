"""Comparing expected calls with actual ones: argument diffs and the optimal one-to-one pairing.

`CompiledExpected` compiles an expected call's comparison once (its rules, its canonical values);
`pair_calls` finds the pairing of expected to actual calls that maximises 2 per full match and 1
per name-only match — never greedy, so the order of the actual calls cannot change the result.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import zip_longest
from typing import Any, NamedTuple

from traceladder.evaluate.rungs.assignment import max_weight_assignment
from traceladder.evaluate.rungs.classes import dominant
from traceladder.evaluate.rungs.compare import Matcher, compile_rule, exact_equal
from traceladder.evaluate.rungs.types import ArgDiff, Call, CallCheck, Expected, Finding

# Refines a parameter difference (→ PARAM_WRONG_FORMAT / PARAM_HALLUCINATED_ID), given the call,
# the parameter and its actual value; None leaves the comparison's own code.
Classifier = Callable[[Call, str, Any], str | None]


@dataclass(frozen=True)
class CompiledExpected:
    """An expected call with its per-parameter matchers built once."""

    expected: Expected
    matchers: tuple[tuple[str, str, Any, Matcher], ...]  # (param, rule, expected value, matcher)
    # The tool's name, read on every comparison (a field: cheaper than a property on the hot path).
    name: str = field(init=False, compare=False)
    # `matchers`, each marked when it is `exact` against a string: that comparison is made inline.
    _steps: tuple[tuple[str, str, Any, Matcher, bool], ...] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", self.expected.name)
        steps = tuple((*m, m[1] == "exact" and type(m[2]) is str) for m in self.matchers)
        object.__setattr__(self, "_steps", steps)

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

    def diffs(self, call: Call, classify: Classifier | None = None) -> tuple[ArgDiff, ...]:
        """Every argument difference (empty tuple = match). Names are not compared here."""
        actual = call[1]  # call.arguments (by index: attribute access on a named tuple costs more)
        if not call[6] or not isinstance(actual, dict):  # call[6]: call.parsed
            shown = call.raw if not call.parsed else call.arguments
            return (
                ArgDiff("(arguments)", self.expected.arguments, shown, "json object", "PARAM_WRONG_FORMAT"),
            )
        if self.expected.rules is None:  # seed 2: the whole object, exact
            return self._whole(call, actual, classify)
        diffs: list[ArgDiff] = []
        if classify is None:
            for key, rule, want, matcher, plain in self._steps:
                if key not in actual:
                    diffs.append(ArgDiff(key, want, None, rule, "PARAM_MISSING"))
                    continue
                got = actual[key]
                if plain:  # what `compile_rule("exact", want)` does for a string, without the call
                    if type(got) is not str or got != want:
                        diffs.append(ArgDiff(key, want, got, rule, "PARAM_WRONG_VALUE"))
                    continue
                ok, code = matcher(got)
                if not ok:
                    diffs.append(ArgDiff(key, want, got, rule, code))
            return tuple(diffs)
        for key, rule, want, matcher in self.matchers:
            if key not in actual:
                diffs.append(ArgDiff(key, want, None, rule, "PARAM_MISSING"))
                continue
            got = actual[key]
            ok, code = matcher(got)
            refined = classify(call, key, got)
            if refined == "PARAM_WRONG_FORMAT" or (not ok and refined):
                code, ok = refined, False
            if not ok:
                diffs.append(ArgDiff(key, want, got, rule, code))
        return tuple(diffs)

    def _whole(self, call: Call, actual: dict[str, Any], classify: Classifier | None) -> tuple[ArgDiff, ...]:
        want_args = self.expected.arguments
        diffs: list[ArgDiff] = []
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


def arguments_match(
    expected: Expected, call: Call, classify: Classifier | None = None
) -> tuple[ArgDiff, ...]:
    """Every argument difference between one expected and one actual call (empty = match)."""
    return CompiledExpected.of(expected).diffs(call, classify)


def call_code(diffs: Sequence[ArgDiff]) -> str | None:
    """The call-level failure class: the highest-priority parameter class present."""
    return dominant(d.code for d in diffs)


class Pairing(NamedTuple):
    """The optimal pairing of expected calls to actual calls (indices into the two lists). A named
    tuple, like the other values made once per trace on the hot path (see `types`)."""

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
    # Each pair is compared at most once: what the fast path compared, the general path reuses.
    known: dict[tuple[int, int], tuple[ArgDiff, ...]] = {}
    fast = _walk_in_order(actual, compiled, valid, compare, known)
    if fast is not None:
        return fast

    def compared(i: int, j: int) -> tuple[ArgDiff, ...]:
        found = known.get((i, j))
        if found is None:
            found = compare(i, j) if compare else compiled[i].diffs(actual[j])
        return found

    return _optimal(actual, compiled, valid, compared)


def _walk_in_order(
    actual: Sequence[Call],
    compiled: Sequence[CompiledExpected],
    valid: Callable[[int], bool],
    compare: Callable[[int, int], tuple[ArgDiff, ...]] | None,
    known: dict[tuple[int, int], tuple[ArgDiff, ...]],
) -> Pairing | None:
    """`_in_order`, written out for speed (no comparison callback per pair), keeping in `known`
    every comparison it made."""
    pairs: list[tuple[int, int]] = []
    j, n = 0, len(actual)
    for i, e in enumerate(compiled):
        name = e.name
        while j < n:
            call = actual[j]
            if call[0] == name:  # call.name
                d = known[(i, j)] = compare(i, j) if compare else e.diffs(call)
                if not d and valid(j):
                    break
            j += 1
        if j == n:
            return None
        pairs.append((i, j))
        j += 1
    return Pairing(tuple(pairs), (), True)


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
    """The general path: every same-name pair compared, the optimal assignment, then order.

    The assignment itself is needed only when no optimal pairing keeps the expected order; to
    know whether one does, the optimum's *weight* suffices, and that is cheap: a call pairs only
    with a call of its own name, so the optimum is the sum of each name's own optimum, and a name
    with one expected (or one actual) call has as optimum its heaviest pair (`_optimum`)."""
    names = [a.name for a in actual]
    diffs = [
        [compared(i, j) if e.name == a else None for j, a in enumerate(names)] for i, e in enumerate(compiled)
    ]
    weights = [
        [0.0 if d is None else (2.0 if not d and valid(j) else 1.0) for j, d in enumerate(row)]
        for row in diffs
    ]
    if len(compiled) <= 1:  # one expected call: its best pair is trivially in order
        chosen, respected = max_weight_assignment(weights), True
    else:
        ordered = _best_ordered(weights)
        respected = sum(weights[i][j] for i, j in ordered) == _optimum(weights, compiled, names)
        chosen = ordered if respected else max_weight_assignment(weights)
    full = tuple((i, j) for i, j in chosen if weights[i][j] == 2.0)
    partial = tuple((i, j, diffs[i][j] or ()) for i, j in chosen if weights[i][j] == 1.0)
    return Pairing(full, partial, respected)


def _optimum(weights: list[list[float]], compiled: Sequence[CompiledExpected], names: list[str]) -> float:
    """The weight of a maximum-weight one-to-one pairing (what `max_weight_assignment`'s pairs
    weigh), name by name. Weights are 0, 1 or 2, so every sum is exact."""
    rows_of: dict[str, list[int]] = {}
    for i, e in enumerate(compiled):
        rows_of.setdefault(e.name, []).append(i)
    total = 0.0
    for name, rows in rows_of.items():
        cols = [j for j, a in enumerate(names) if a == name]
        if not cols:
            continue
        if len(rows) == 1:
            total += max(weights[rows[0]][j] for j in cols)
        elif len(cols) == 1:
            total += max(weights[i][cols[0]] for i in rows)
        else:
            sub = [[weights[i][j] for j in cols] for i in rows]
            total += sum(sub[i][j] for i, j in max_weight_assignment(sub))
    return total


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
