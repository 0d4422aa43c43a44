"""The ladder: one pure module per rung, the verdict, and what is built on verdicts (reports,
consistency, baselines, the gate). Nothing here touches DuckDB or OpenTelemetry."""

from traceladder.evaluators.judge import EVALUATOR_VERSION, JudgeContext, Verdict, judge_case
from traceladder.evaluators.types import ArgDiff, Call, CallCheck, Expected, Finding, RungResult

__all__ = [
    "EVALUATOR_VERSION",
    "ArgDiff",
    "Call",
    "CallCheck",
    "Expected",
    "Finding",
    "JudgeContext",
    "RungResult",
    "Verdict",
    "judge_case",
]
