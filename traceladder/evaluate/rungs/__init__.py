"""The ladder: one pure module per rung under one contract, and the verdict as a fold over them.
Nothing here touches DuckDB or OpenTelemetry."""

from importlib import import_module
from typing import TYPE_CHECKING

from traceladder.evaluate.rungs.types import (
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
    from traceladder.evaluate.rungs.inputs import DomainRules, TraceInputs
    from traceladder.evaluate.rungs.ladder import EVALUATOR_VERSION, Ladder, Rung, load_ladder

# Loaded on first use, by the module that owns each name.
_LAZY = {
    "EVALUATOR_VERSION": "ladder",
    "Ladder": "ladder",
    "Rung": "ladder",
    "load_ladder": "ladder",
    "DomainRules": "inputs",
    "TraceInputs": "inputs",
}

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
    """The ladder (every rung, and jsonschema with them) and a trace's inputs (the case model,
    and the case loader with it) are imported on first use: importing `evaluate.rungs.types` for a
    result's shape — as `report` and `gate` do — should load neither."""
    if name in _LAZY:
        return getattr(import_module(f"traceladder.evaluate.rungs.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
