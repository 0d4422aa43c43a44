"""Consistency across repeated runs: per-case agreement, flaky cases, pass^k and pass@k.

For a case with n trials of which c passed:

  pass^k = C(c, k) / C(n, k)           the chance that k random trials ALL pass (tau-bench)
  pass@k = 1 - C(n - c, k) / C(n, k)   the chance that AT LEAST ONE of k trials passes

Both are averaged over cases, for k = 1..n. A trial passes when its verdict is PASS; SKIP trials
are left out, AGENT_ERROR counts as not passing (the agent did not deliver).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from math import comb
from statistics import fmean
from typing import Any

from traceladder.evaluate.rungs.types import VerdictValue


def pass_hat_k(n: int, c: int, k: int) -> float:
    return comb(c, k) / comb(n, k) if k <= n else 0.0


def pass_at_k(n: int, c: int, k: int) -> float:
    return 1.0 - comb(n - c, k) / comb(n, k) if k <= n else 0.0


def consistency(trials: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """`trials`: case id → verdicts, one per trial. Returns the consistency record body."""
    per_case: dict[str, dict[str, Any]] = {}
    for case_id, verdicts in sorted(trials.items()):
        scored = [v for v in verdicts if v != VerdictValue.SKIP]
        if not scored:
            continue
        counts = Counter(scored)
        majority = max(counts.values())
        per_case[case_id] = {
            "trials": len(scored),
            "passes": counts.get(VerdictValue.PASS, 0),
            "verdicts": list(verdicts),
            "agreement": round(majority / len(scored), 4),
            "flaky": len(counts) > 1,
        }
    n = min((c["trials"] for c in per_case.values()), default=0)
    pass_hat = {}
    pass_at = {}
    for k in range(1, n + 1):
        pass_hat[str(k)] = round(fmean(pass_hat_k(c["trials"], c["passes"], k) for c in per_case.values()), 4)
        pass_at[str(k)] = round(fmean(pass_at_k(c["trials"], c["passes"], k) for c in per_case.values()), 4)
    return {
        "cases": len(per_case),
        "trials_per_case": n,
        "mean_agreement": round(fmean(c["agreement"] for c in per_case.values()), 4) if per_case else None,
        "flaky_cases": [cid for cid, c in per_case.items() if c["flaky"]],
        "pass_hat_k": pass_hat,
        "pass_at_k": pass_at,
        "per_case": per_case,
    }
