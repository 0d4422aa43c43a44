"""The ladder: one pure module per rung under one contract, and the verdict as a fold over them.
Nothing here touches DuckDB or OpenTelemetry."""

from traceladder.evaluators.inputs import DomainRules, TraceInputs
from traceladder.evaluators.ladder import EVALUATOR_VERSION, Ladder, Rung, load_ladder
from traceladder.evaluators.types import (
    VERDICTS,
    ArgDiff,
    Call,
    CallCheck,
    Expected,
    Finding,
    RungResult,
    Verdict,
    VerdictValue,
)

__all__ = [
    "EVALUATOR_VERSION",
    "VERDICTS",
    "ArgDiff",
    "Call",
    "CallCheck",
    "DomainRules",
    "Expected",
    "Finding",
    "Ladder",
    "Rung",
    "RungResult",
    "TraceInputs",
    "Verdict",
    "VerdictValue",
    "load_ladder",
]
