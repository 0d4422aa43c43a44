"""Rung 5 — judge: an LLM's answers to the rubric's questions about meaning (is the final answer
grounded in the tool results; was the tool choice sensible; does the trace follow the domain's
policy).

Survivors only: a trace a code rung failed goes to triage, never to the judge, so the judge's bill
scales with the open questions alone. The rung itself is pure: the judgment arrives as an input
(`inputs.judge`, a `Judgment` — asked for, cached and costed by `traceladder.evaluate.judge.phase`), and a
trace without one (no judge configured, the budget spent, no final answer, the judge's reply
unusable) is `not_evaluated` with that reason — never a pass.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from traceladder.evaluate.rungs.types import Finding, RungResult

if TYPE_CHECKING:  # the reports read NAME: the analysis (and jsonschema with it) is the ladder's
    from traceladder.evaluate.rungs.analysis import Analysis
    from traceladder.evaluate.rungs.inputs import TraceInputs

NUMBER = 5
NAME = "judge"
NEEDS = frozenset({"judge"})
SURVIVORS_ONLY = True


class CriterionVerdict(NamedTuple):
    criterion: str
    verdict: str  # pass | fail | not_applicable
    reason: str
    code: str  # the finding code of a failure (from the rubric)


class Judgment(NamedTuple):
    model: str
    criteria: tuple[CriterionVerdict, ...]
    cached: bool = False


def evaluate(inputs: TraceInputs, analysis: Analysis) -> RungResult:
    judgment = inputs.judge
    assert judgment is not None  # NEEDS: the ladder runs this rung only with a judgment
    source = f"judge {judgment.model}" + (" (cached)" if judgment.cached else "")
    failed = [c for c in judgment.criteria if c.verdict == "fail"]
    applicable = [c for c in judgment.criteria if c.verdict != "not_applicable"]
    scores = {f"judge_{c.criterion}": float(c.verdict == "pass") for c in applicable}
    if failed:
        findings = tuple(Finding(NUMBER, c.code, f"{c.criterion}: {c.reason}") for c in failed)
        return RungResult(
            NUMBER,
            NAME,
            "fail",
            scores,
            findings=findings,
            explanation=f"{source}: {failed[0].criterion} failed: {failed[0].reason}",
        )
    passed = ", ".join(c.criterion for c in applicable) or "no criterion applied"
    return RungResult(NUMBER, NAME, "pass", scores, explanation=f"{source}: {passed} pass")
