"""One trace read again, span by span, for `traceladder explain`: which convention read which span,
what each call came from, and what no convention read.

Pure: handed what the store holds of one trace (`store.derived.TraceRows`), it reads it with the
same stage and conventions the store's rows came from, so what it shows is how those rows were
derived (for a store of the current extraction) — not a second reading that could disagree.
"""

from __future__ import annotations

from typing import NamedTuple

from traceladder.extract.conventions import extract_trace, registry
from traceladder.extract.conventions.views import ExtractedCall, ToolDefinition
from traceladder.extract.reading import Reading, read_trace
from traceladder.extract.stage import trace_views
from traceladder.store.derived import TraceRows


class SpanLine(NamedTuple):
    span_id: str
    parent_span_id: str | None
    name: str
    convention: str | None  # the convention that claimed it; None: none knows it
    role: str | None


class Explanation(NamedTuple):
    trace_id: str
    spans: list[SpanLine]  # start order
    records: int
    calls: list[ExtractedCall]
    definitions: list[ToolDefinition]
    reading: Reading


def explain(trace_id: str, rows: TraceRows, conventions: str) -> Explanation:
    """The reading of trace `trace_id` from its stored rows, with the plug-ins named in
    `conventions` (the store's setting) in force."""
    with registry.in_force(conventions):
        hooks = registry.hooks()
        views, logs = trace_views(rows, trace_id)
        found = extract_trace(views, logs)
        reading = read_trace(views, logs, [*found.calls, *found.prior], hooks)
    claimed = {c.span_id: c for c in reading.claims}
    lines = [
        SpanLine(s.span_id, s.parent_span_id, s.name,
                 claimed[s.span_id].convention if s.span_id in claimed else None,
                 claimed[s.span_id].role if s.span_id in claimed else None)
        for s in views
    ]  # fmt: skip
    return Explanation(trace_id, lines, len(logs), found.calls, found.definitions, reading)
