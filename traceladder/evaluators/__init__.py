"""The ladder: one pure module per rung under one contract, and the verdict as a fold over them.
Nothing here touches DuckDB or OpenTelemetry."""

from typing import TYPE_CHECKING

from traceladder.evaluators.inputs import DomainRules, TraceInputs
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

if TYPE_CHECKING:
    from traceladder.evaluators.ladder import EVALUATOR_VERSION, Ladder, Rung, load_ladder

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


def __getattr__(name: str) -> object:
    """The ladder (every rung, and jsonschema with them) is imported on first use: importing
    `evaluators.types` for a result's shape — as `report` and `gate` do — should not load it."""
    if name in {"EVALUATOR_VERSION", "Ladder", "Rung", "load_ladder"}:
        from traceladder.evaluators import ladder

        return getattr(ladder, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
