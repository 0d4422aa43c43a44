"""The names a plug-in rung uses: a rung is a module with `NUMBER`, `NAME`, `NEEDS` (the
`TraceInputs` fields it cannot run without), `SURVIVORS_ONLY` and
`evaluate(inputs: TraceInputs, analysis) -> RungResult` (docs/extending.md). Registered in the
`traceladder.rungs` entry-point group; used where `--rungs` or `[plugins] rungs` names it."""

from traceladder.evaluate.rungs.analysis import Analysis
from traceladder.evaluate.rungs.inputs import DomainRules, TraceInputs
from traceladder.evaluate.rungs.types import (
    ArgDiff,
    Call,
    CallCheck,
    Expected,
    Finding,
    RungResult,
    RungStatus,
)

__all__ = [
    "Analysis",
    "ArgDiff",
    "Call",
    "CallCheck",
    "DomainRules",
    "Expected",
    "Finding",
    "RungResult",
    "RungStatus",
    "TraceInputs",
]
