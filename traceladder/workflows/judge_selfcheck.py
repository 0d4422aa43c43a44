"""The `selfcheck --judge` workflow: a judge's agreement with labelled trajectories, and its drift.

`judge_selfcheck(JudgeSelfcheckRequest)` → `JudgeSelfcheckResult`: every labelled item judged
`rounds` times with no cache, per criterion accuracy, Cohen's kappa, confusion and rerun drift;
`low` when a criterion misses the request's kappa floor or drift ceiling.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from traceladder.errors import UserError
from traceladder.evaluate.judge.choice import JudgeRequest, resolve_judge
from traceladder.evaluate.judge.client import JudgeClient
from traceladder.evaluate.judge.meta import MetaReport, load_meta, measure
from traceladder.evaluate.judge.rubric import build_prompt
from traceladder.suite.domain.registry import load_domain

SIM_JUDGE = "sim:judge"


@dataclass(frozen=True)
class JudgeSelfcheckRequest:
    """The judge to measure (`model` None: `sim:judge`) at `base_url` with `rubric`; the policy of
    `domain`; the labelled set `meta` (None: the shipped one); `rounds` ≥ 1; the exit-1 thresholds
    `min_kappa` (an undefined kappa misses it) and `max_drift`."""

    domain: str
    model: str | None = None
    base_url: str | None = None
    rubric: Path | None = None
    meta: Path | None = None
    rounds: int = 3
    min_kappa: float | None = None
    max_drift: float | None = None


@dataclass(frozen=True)
class JudgeSelfcheckResult:
    report: MetaReport
    low: bool  # a criterion's kappa below min_kappa (or undefined), or its drift above max_drift


def judge_selfcheck(request: JudgeSelfcheckRequest) -> JudgeSelfcheckResult:
    """Measure the request's judge. `UserError` for rounds below 1, an unreachable judge or one
    that refuses the key, and a judge that gave no usable reply at all (not a 0% judge)."""
    if request.rounds < 1:
        raise UserError("--rounds must be at least 1")
    # Every round asks the judge afresh (no cache), with no budget and no price table: drift is
    # measured, not what a run of `evaluate` would spend.
    judge = JudgeRequest(
        model=request.model or SIM_JUDGE, base_url=request.base_url, rubric=request.rubric, cache=False
    )
    options = resolve_judge(judge, simulated=True)
    assert options is not None  # a model is always named here
    items = load_meta(request.meta)
    prompt = build_prompt(options.rubric, load_domain(request.domain).judge_policy)
    client = JudgeClient(options.endpoint)
    try:
        client.check()  # an unreachable judge, or one that refuses the key, is not a 0% judge
        report = measure(items, client, prompt, options.rubric, rounds=request.rounds)
    finally:
        client.close()
    if report.errors == report.judgments:
        raise UserError(
            f"the judge {report.model!r} gave no usable reply to any of the {report.judgments} "
            f"requests ({report.first_error}), so nothing was measured; check --judge-model and "
            "--judge-base-url"
        )
    low = any(
        (request.min_kappa is not None and (s.kappa is None or s.kappa < request.min_kappa))
        or (request.max_drift is not None and s.drift > request.max_drift)
        for s in report.criteria
    )
    return JudgeSelfcheckResult(report, low)
