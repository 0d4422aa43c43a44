"""Rung 3 — trajectory: does the sequence of tool names follow the expected path?

Needs a case. Reports seed 2's four mode scores on the calls left after ignorable reads; fails on
ORDER_WRONG (an order-sensitive case whose calls are out of order) and CHAIN_BROKEN (a
confirmation that does not carry the link — e.g. `action_id` — its request returned earlier in the
trace; which tools request and confirm comes from the domain's `ChainSpec`).

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

from traceladder.evaluate.rungs.analysis import Analysis
from traceladder.evaluate.rungs.inputs import TraceInputs
from traceladder.evaluate.rungs.types import Finding, RungResult, RungStatus

NUMBER = 3
NAME = "trajectory"
NEEDS = frozenset({"case"})
SURVIVORS_ONLY = False

Mode = Literal["strict", "unordered", "subset", "superset"]
MODES: tuple[Mode, ...] = ("strict", "unordered", "subset", "superset")


def _strict(actual: Sequence[str], expected: Sequence[str]) -> float:
    """1.0 for the same sequence, else the in-order prefix over the longer length."""
    if list(actual) == list(expected):
        return 1.0
    prefix = 0
    for got, want in zip(actual, expected, strict=False):
        if got != want:
            break
        prefix += 1
    return prefix / max(len(actual), len(expected), 1)


def _counts(actual: Sequence[str], expected: Sequence[str], multiset: bool) -> tuple[int, int, int, int]:
    """(overlap, union, |actual|, |expected|) as sets, or as bags counting duplicates."""
    if multiset:
        a, e = Counter(actual), Counter(expected)
        return sum((a & e).values()), sum((a | e).values()), sum(a.values()), sum(e.values())
    sa, se = set(actual), set(expected)
    return len(sa & se), len(sa | se), len(sa), len(se)


def _ratio(mode: Mode, counts: tuple[int, int, int, int]) -> float:
    """The three set-based modes' formulas, in one place (an empty denominator passes)."""
    overlap, union, n_actual, n_expected = counts
    if mode == "unordered":  # Jaccard
        return overlap / union if union else 1.0
    if mode == "subset":  # expected ⊆ actual: recall
        return overlap / n_expected if n_expected else 1.0
    if mode == "superset":  # actual ⊆ expected: precision
        return overlap / n_actual if n_actual else 1.0
    raise ValueError(f"unknown trajectory mode {mode!r}; choose one of {', '.join(MODES)}")


def score(actual: Sequence[str], expected: Sequence[str], mode: Mode, *, multiset: bool = False) -> float:
    """The partial score of one mode in [0, 1]; 1.0 means the mode passes."""
    if mode == "strict":
        return _strict(actual, expected)
    return _ratio(mode, _counts(actual, expected, multiset))


def scores(actual: Sequence[str], expected: Sequence[str], *, multiset: bool = False) -> dict[str, float]:
    """All four modes at once, keyed by mode name (the set algebra done once)."""
    counts = _counts(actual, expected, multiset)
    return {mode: _strict(actual, expected) if mode == "strict" else _ratio(mode, counts) for mode in MODES}


# The scores and their sentence per (expected calls, judged names): a pure function of the two,
# and a suite's traces repeat few sequences. Keyed by the identity of the case's compiled expected
# calls (kept in the value, so an id is never reused while cached); bounded like the other memos.
# The result without findings (a pass, or skipped when nothing was expected) is kept too: it is the
# same value for every trace with those names, so it is one object, and its row is built once
# (`rows.RowBuilder` builds a row per distinct rung result).
_SCORED: dict[tuple[int, tuple[str, ...]], tuple[object, dict[str, float], str, RungResult]] = {}
_SCORED_LIMIT = 100_000


def _scored(a: Analysis, names: tuple[str, ...]) -> tuple[dict[str, float], str, RungResult]:
    """`scores` of the judged names against the expected ones, the pass sentence quoting them, and
    the rung's result when it has no findings."""
    key = (id(a.expected), names)
    hit = _SCORED.get(key)
    if hit is None or hit[0] is not a.expected:
        values = scores(names, [e.name for e in a.expected])
        text = (
            f"strict {values['strict']:.2f}, unordered {values['unordered']:.2f}, "
            f"subset {values['subset']:.2f}, superset {values['superset']:.2f}"
        )
        status: RungStatus = "pass" if a.expected else "skipped"
        if len(_SCORED) >= _SCORED_LIMIT:
            _SCORED.clear()
        clean = RungResult(NUMBER, NAME, status, values, (), (), text)
        hit = _SCORED[key] = (a.expected, values, text, clean)
    return hit[1], hit[2], hit[3]


def evaluate(inputs: TraceInputs, analysis: Analysis) -> RungResult:
    a = analysis
    m = a.match
    names = tuple(c.name for c in m.judged)
    values, text, clean = _scored(a, names)
    findings: list[Finding] = []
    if a.case.order_sensitive and not m.pairing.order_respected:
        expected = [e.name for e in a.expected]
        message = f"calls out of order: expected {' → '.join(expected)}, got {' → '.join(names)}"
        findings.append(Finding(NUMBER, "ORDER_WRONG", message, expected=expected, actual=list(names)))
    findings += _chain_findings(a)
    if not findings:
        return clean
    status: RungStatus = "fail" if a.expected else "skipped"
    text = "; ".join(f.message for f in findings)
    return RungResult(NUMBER, NAME, status, values, (), tuple(findings), text)


def _chain_findings(a: Analysis) -> list[Finding]:
    """A confirmation must carry the link its request returned, before it, in the trace."""
    rules, expected, calls = a.rules, a.expected, a.calls
    pairing = a.match.pairing
    pairs = {i: j for i, j in pairing.full} | {i: j for i, j, _ in pairing.partial}
    findings = []
    for i, exp in enumerate(expected):
        if exp.name not in rules.confirmations or i not in pairs:
            continue
        request = next((k for k in range(i - 1, -1, -1) if expected[k].name in rules.requests), None)
        confirm = calls[pairs[i]]
        given = confirm.arguments.get(rules.link) if isinstance(confirm.arguments, dict) else None
        returned = None
        if request is not None and request in pairs:
            req_call = calls[pairs[request]]
            if isinstance(req_call.result, dict) and req_call.ordinal < confirm.ordinal:
                returned = req_call.result.get(rules.link)
        if returned is None or given != returned:
            # "returned None" would read as a value; say what is missing instead.
            before = (
                f"the request returned {returned!r} before it"
                if returned is not None
                else f"no request before it returned its {rules.link}"
            )
            message = f"{exp.name} used {rules.link} {given!r}, but {before}"
            findings.append(
                Finding(
                    NUMBER, "CHAIN_BROKEN", message, exp.name, rules.link, returned, given, confirm.ordinal
                )
            )
    return findings
