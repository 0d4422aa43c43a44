"""Rung 2 — call match: right function, then arguments under the case's rules.

`arguments_match` compares one expected call with one actual call (the *expected* call defines
which keys are compared: a call with no arguments never matches everything). `positional` gives
seed 2's per-position rows; `pair_calls` finds the optimal one-to-one pairing used for cases.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import zip_longest
from typing import Any

from traceladder.evaluators.assignment import max_weight_assignment
from traceladder.evaluators.compare import compare, exact_equal, seed2_normalize
from traceladder.evaluators.types import ArgDiff, Call, CallCheck, Expected, Finding, RungResult

# Refines a PARAM_WRONG_VALUE for one parameter (→ PARAM_WRONG_FORMAT / PARAM_HALLUCINATED_ID).
Classifier = Callable[[Call, str, Any], str | None]
PARAM_PRIORITY = ("PARAM_WRONG_FORMAT", "PARAM_MISSING", "PARAM_HALLUCINATED_ID", "PARAM_WRONG_VALUE")


def arguments_match(
    expected: Expected, call: Call, classify: Classifier | None = None
) -> tuple[ArgDiff, ...]:
    """Every argument difference (empty tuple = match). Names are not compared here."""
    if not call.parsed or not isinstance(call.arguments, dict):
        shown = call.raw if not call.parsed else call.arguments
        return (ArgDiff("(arguments)", expected.arguments, shown, "json object", "PARAM_WRONG_FORMAT"),)
    actual = call.arguments
    diffs: list[ArgDiff] = []
    if expected.rules is None:  # seed 2: whole-object equality after normalisation
        for key in sorted(set(expected.arguments) | set(actual)):
            want, got = expected.arguments.get(key), actual.get(key)
            if key not in actual:
                diffs.append(ArgDiff(key, want, None, "normalized", "PARAM_MISSING"))
            elif key not in expected.arguments:
                diffs.append(ArgDiff(key, None, got, "normalized", "PARAM_UNEXPECTED"))
            elif not exact_equal(seed2_normalize(want), seed2_normalize(got)):
                diffs.append(ArgDiff(key, want, got, "normalized", "PARAM_WRONG_VALUE"))
        return tuple(diffs)
    for key, want in expected.arguments.items():
        rule = expected.rules.get(key, "exact")
        if key not in actual:
            diffs.append(ArgDiff(key, want, None, rule, "PARAM_MISSING"))
            continue
        ok, code = compare(rule, want, actual[key])
        refined = classify(call, key, actual[key]) if classify else None
        if refined == "PARAM_WRONG_FORMAT" or (not ok and refined):
            code, ok = refined, False
        if not ok:
            diffs.append(ArgDiff(key, want, actual[key], rule, code))
    return tuple(diffs)


def call_code(diffs: Sequence[ArgDiff]) -> str | None:
    """The call-level failure class: the highest-priority parameter class present."""
    codes = {d.code for d in diffs}
    return next((c for c in PARAM_PRIORITY if c in codes), next(iter(codes), None) if codes else None)


def positional(actual: Sequence[Call], expected: Sequence[Expected]) -> RungResult:
    """Seed 2's rows: per position, name match and exact (normalised) match; missing and extra
    calls are rows of their own."""
    checks, findings = [], []
    for index, (got, want) in enumerate(zip_longest(actual, expected)):
        if got is None or want is None:
            status = "missing" if got is None else "extra"
            code = "CALL_MISSING" if got is None else "CALL_EXTRA"
            checks.append(
                CallCheck(
                    status,
                    index if want else None,
                    want.name if want else None,
                    got.ordinal if got else None,
                    got.name if got else None,
                    code,
                    message=f"position {index + 1}: {status} call",
                )
            )
            named = want.name if want is not None else got.name if got is not None else None
            findings.append(Finding(2, code, checks[-1].message, named))
            continue
        if got.name != want.name:
            msg = f"position {index + 1}: expected {want.name}, got {got.name}"
            checks.append(
                CallCheck("wrong_tool", index, want.name, got.ordinal, got.name, "TOOL_WRONG", message=msg)
            )
            findings.append(Finding(2, "TOOL_WRONG", msg, got.name, expected=want.name, actual=got.name))
            continue
        diffs = arguments_match(want, got)
        status = "match" if not diffs else "partial"
        msg = f"position {index + 1}: {want.name} " + (
            "exact match" if not diffs else "name matches, arguments differ"
        )
        checks.append(
            CallCheck(status, index, want.name, got.ordinal, got.name, call_code(diffs), diffs, msg)
        )
        for d in diffs:
            findings.append(Finding(2, d.code or "", msg, got.name, d.param, d.expected, d.actual))
    ok = all(c.status == "match" for c in checks)
    exact = sum(c.status == "match" for c in checks)
    named = exact + sum(c.status == "partial" for c in checks)
    longer = max(len(actual), len(expected), 1)
    return RungResult(
        2,
        "call_match",
        "pass" if ok else "fail",
        {"exact_match_rate": exact / longer, "name_match_rate": named / longer},
        tuple(checks),
        tuple(findings),
        "every call matches" if ok else "; ".join(c.message for c in checks if c.status != "match"),
    )


@dataclass(frozen=True)
class Pairing:
    """The optimal pairing of expected calls to actual calls (indices into the two lists)."""

    full: tuple[tuple[int, int], ...]  # name and arguments match
    partial: tuple[tuple[int, int, tuple[ArgDiff, ...]], ...]  # name only
    order_respected: bool  # an optimal pairing exists that keeps expected order


def pair_calls(
    actual: Sequence[Call],
    expected: Sequence[Expected],
    *,
    valid: Callable[[Call], bool] = lambda call: True,
    classify: Classifier | None = None,
    compare: Callable[[Expected, Call], tuple[ArgDiff, ...]] | None = None,
) -> Pairing:
    """Pair each expected call with at most one actual call, maximising 2 per full match and 1 per
    name-only match. A full match also needs a schema-valid call (`valid`). Order is then checked
    without changing the score: if some optimal pairing keeps the expected order, it is used."""

    def compared(e: Expected, a: Call) -> tuple[ArgDiff, ...]:
        return compare(e, a) if compare else arguments_match(e, a, classify)

    diffs = [[compared(e, a) if e.name == a.name else None for a in actual] for e in expected]
    weights = [
        [0.0 if d is None else (2.0 if not d and valid(a) else 1.0) for d, a in zip(row, actual, strict=True)]
        for row in diffs
    ]
    best = max_weight_assignment(weights)
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
