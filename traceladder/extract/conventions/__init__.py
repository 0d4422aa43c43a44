"""Tool calls and tool definitions of one trace, from everything stored for it, any convention.

`extract_trace(spans, logs)` reads OTel GenAI (execute_tool spans, message attributes, the event
form in log records or span events), OpenInference and OpenLLMetry, reports each call once
however many places show it (the response that made it, later requests' histories, its tool
span, log events), in a deterministic order for any input order. Pure: no I/O, never raises on
what a producer sent. Rules and per-producer notes: docs/conventions.md.
"""

from __future__ import annotations

from collections.abc import Sequence

from traceladder.extract.conventions.collect import collect
from traceladder.extract.conventions.definitions import choose
from traceladder.extract.conventions.merge import merge
from traceladder.extract.conventions.views import (
    ExtractedCall,
    LogView,
    SpanView,
    ToolDefinition,
    TraceExtraction,
)

__all__ = [
    "ExtractedCall",
    "LogView",
    "SpanView",
    "ToolDefinition",
    "TraceExtraction",
    "extract_trace",
]


def extract_trace(spans: Sequence[SpanView], logs: Sequence[LogView] = ()) -> TraceExtraction:
    """The calls (ordered, `ordinal` 1..n) and definitions (by name) of one trace.

    `spans` and `logs` are everything stored for the trace, in any order, duplicates allowed.
    The calls the input of the trace's first request already held were made before the trace
    began: they are not its calls, and come back apart, as `prior` (to link the trace to the
    earlier turn that made them).
    """
    collected = collect(spans, logs)
    calls, prior = merge(collected)
    return TraceExtraction(calls, choose(collected.definitions), tuple(prior))
