"""Paired statistics for model A vs model B on one suite: McNemar's exact test, and how repeated
trials become one paired outcome per case. Pure: numbers and verdict strings in, numbers out.

Two runs of the same cases are paired samples — each case is tried by both — so the question
"is B worse than A?" is settled by the discordant cases alone: `b` cases A passed and B failed,
`c` cases A failed and B passed. Under "no difference" each discordant case is a fair coin, so
b ~ Binomial(b + c, 1/2), and McNemar's exact test is the two-sided binomial test of that:

    p = min(1, 2 · Σ_{i=0}^{min(b, c)} C(n, i) / 2^n),   n = b + c

(b = 1, c = 8: n = 9, Σ = C(9,0) + C(9,1) = 10, p = 2 · 10 / 512 = 0.0390625). No discordant
case (n = 0) is no evidence of a difference: p = 1. Exact with integers (`math.comb`), no scipy,
no normal approximation — suites are small, and the χ² form is wrong exactly there.

Repeated trials (`--repeat K`, or several runs of one model): a case PASSES on a side when every
one of its first k scored trials passed, k being the smaller of the two sides' trial counts for
that case — pass^k's event ("all k trials succeed", tau-bench), made a yes/no per case so the
pairs stay pairs. A flaky case thus counts as failing, which is what a user of the agent sees.
A trial is scored unless it is SKIP or NOT_EVALUATED (no evidence either way); AGENT_ERROR is a
trial that did not pass, as in `consistency`: the agent did not deliver.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import comb

from traceladder.evaluate.rungs.types import VerdictValue as V

UNSCORED = frozenset({V.SKIP, V.NOT_EVALUATED})


def mcnemar_exact(b: int, c: int) -> float:
    """The two-sided exact McNemar p-value for `b` and `c` discordant pairs (see the module)."""
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be >= 0, got b={b}, c={c}")
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(comb(n, i) for i in range(min(b, c) + 1))
    # Integer arithmetic until the one division: exact for any suite size.
    return min(1.0, 2 * tail / 2**n)


def scored(verdicts: Sequence[str]) -> list[str]:
    """The trials that count: SKIP and NOT_EVALUATED carry no evidence."""
    return [v for v in verdicts if v not in UNSCORED]


@dataclass(frozen=True)
class PairedOutcome:
    """One case on both sides: did it pass all k trials on A, on B; k; or None when a side has no
    scored trial (the case is then not paired)."""

    a_pass: bool
    b_pass: bool
    k: int


def pair(a_verdicts: Sequence[str], b_verdicts: Sequence[str]) -> PairedOutcome | None:
    """The paired outcome of one case from its trials' verdicts on each side, in trial order."""
    a, b = scored(a_verdicts), scored(b_verdicts)
    k = min(len(a), len(b))
    if k == 0:
        return None
    return PairedOutcome(all(v == V.PASS for v in a[:k]), all(v == V.PASS for v in b[:k]), k)


@dataclass(frozen=True)
class McNemar:
    """The 2×2 table of paired outcomes and the test on its discordant cells."""

    both_pass: int
    b: int  # A passed, B failed: regressions
    c: int  # A failed, B passed: improvements
    both_fail: int
    p_value: float
    alpha: float

    @property
    def pairs(self) -> int:
        return self.both_pass + self.b + self.c + self.both_fail

    @property
    def significant(self) -> bool:
        return self.p_value < self.alpha

    @property
    def b_worse(self) -> bool:
        """B is significantly worse: more regressions than improvements, and p < alpha."""
        return self.significant and self.b > self.c

    @property
    def b_better(self) -> bool:
        return self.significant and self.c > self.b


def mcnemar(outcomes: Sequence[PairedOutcome], alpha: float = 0.05) -> McNemar:
    """The test over paired outcomes; `alpha` in (0, 1)."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    both = sum(1 for o in outcomes if o.a_pass and o.b_pass)
    b = sum(1 for o in outcomes if o.a_pass and not o.b_pass)
    c = sum(1 for o in outcomes if not o.a_pass and o.b_pass)
    neither = len(outcomes) - both - b - c
    return McNemar(both, b, c, neither, mcnemar_exact(b, c), alpha)
