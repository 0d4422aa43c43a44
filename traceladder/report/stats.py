"""The two statistics `trend` uses, with nothing but `math`: a pass rate's interval and a drop test.

Counts are floats because judged traces carry sampling weights. The SQL views of migration
007_trend_views compute the same Wilson interval; `tests/reporting/test_trend.py` holds them to this module.
"""

from __future__ import annotations

import math

Z_95 = 1.96  # two-sided 95%: the views hard-code the same value


def wilson(passed: float, n: float, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval for a pass rate of `passed` out of `n`.

    Unlike the normal (Wald) interval it stays inside [0, 1] and is not zero-width at a rate of 0
    or 1: 30 passes out of 30 gives [0.886, 1.0], not [1.0, 1.0]. With no evidence (`n` = 0) the
    interval is the whole range, (0.0, 1.0) — the limit of the formula as n → 0.
    """
    if n < 0 or passed < 0 or passed > n or not math.isfinite(n) or not math.isfinite(passed):
        raise ValueError(f"wilson needs 0 <= passed <= n, finite; got passed={passed}, n={n}")
    if n == 0:
        return (0.0, 1.0)
    p = passed / n
    denominator = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return (max(0.0, center - half), min(1.0, center + half))


def two_proportion_z(p1: float, n1: float, p2: float, n2: float) -> tuple[float, float]:
    """The pooled two-proportion z-test of "the second rate is lower than the first".

    z = (p1 - p2) / sqrt(p(1 - p) (1/n1 + 1/n2)), with p the pooled rate (p1 n1 + p2 n2) / (n1 + n2),
    so a drop gives a positive z; the one-sided p-value is P(Z >= z) = erfc(z / sqrt 2) / 2.
    Nothing to test — either sample empty, or the pooled rate 0 or 1 (every trace passed, or every
    one failed: then the rates are equal) — gives (0.0, 1.0): no evidence of a drop.
    """
    for rate in (p1, p2):
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"a rate must be in [0, 1], got {rate}")
    if n1 < 0 or n2 < 0:
        raise ValueError(f"sample sizes must be >= 0, got {n1} and {n2}")
    if n1 == 0 or n2 == 0:
        return (0.0, 1.0)
    pooled = (p1 * n1 + p2 * n2) / (n1 + n2)
    variance = pooled * (1 - pooled) * (1 / n1 + 1 / n2)
    if variance <= 0:
        return (0.0, 1.0)
    z = (p1 - p2) / math.sqrt(variance)
    return (z, 0.5 * math.erfc(z / math.sqrt(2)))
