"""Reads one trace's spans and log records into sources, whatever convention produced them.

Each span is classified once: a tool execution (by attributes, never by span name: MCP tool spans
are named `tools/call x`), an LLM request/response, or neither. Input order never matters: spans
are deduplicated by span_id and log records by record_id (a re-sent duplicate resolves to the
same survivor whatever the order), and everything is sorted before `merge` looks at it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, Final

from traceladder.conventions import openinference as oi
from traceladder.conventions import openllmetry as ol
from traceladder.conventions import otel_genai as og
from traceladder.conventions.definitions import request_lists, tool_span_list
from traceladder.conventions.events import Events, genai_history, span_events
from traceladder.conventions.sources import DefinitionEntry, Execution, History, LLMSpan, ResponseOutput, Turn
from traceladder.conventions.values import text
from traceladder.conventions.views import RESPONSE, LogView, SpanView


@dataclass(slots=True)
class Collected:
    llm_spans: list[LLMSpan]  # sorted by (time_ns, key)
    executions: list[Execution]  # sorted by (start_ns, span_id)
    definitions: list[DefinitionEntry]


# Attributes that make a span worth reading; a span with none of them (HTTP, DB, ...) and no
# events costs one set operation.
_MARKERS: Final = frozenset(
    {
        og.OPERATION, og.TOOL_NAME, og.INPUT_MESSAGES, og.OUTPUT_MESSAGES, og.TOOL_DEFINITIONS,
        oi.SPAN_KIND, oi.OUTPUT_FIRST, oi.INPUT_FIRST, oi.TOOLS_FIRST,
        ol.SPAN_KIND, ol.REQUEST_TYPE, ol.COMPLETION_FIRST, ol.PROMPT_FIRST, ol.FUNCTIONS_FIRST,
    }
)  # fmt: skip


def _execution(
    attrs: dict[str, Any], span: SpanView, operation: Any, oi_kind: str | None
) -> Execution | None:
    """The tool-span conventions in precedence order: an explicit execute_tool, OpenInference
    TOOL, OpenLLMetry tool (which also sets gen_ai.tool.name without an operation, so it comes
    before) and last a span with gen_ai.tool.name but no operation (Pydantic AI omits it)."""
    if operation == og.EXECUTE_TOOL:
        return og.execution(span)
    if oi_kind == "TOOL":
        return oi.execution(span)
    if ol.is_tool_span(attrs):
        return ol.execution(span)
    if operation is None and og.TOOL_NAME in attrs:
        return og.execution(span)
    return None


def _is_llm(attrs: dict[str, Any], operation: Any, oi_kind: str | None) -> bool:
    if operation is not None:
        # invoke_agent and other operations: their messages summarise a run, they request nothing
        return isinstance(operation, str) and operation in og.INFERENCE_OPERATIONS
    if oi_kind is not None:
        return oi_kind == "LLM"  # AGENT, CHAIN, ...: as above
    return ol.is_llm(attrs) or og.OUTPUT_MESSAGES in attrs or og.INPUT_MESSAGES in attrs


def _read_llm_span(attrs: dict[str, Any], llm: LLMSpan) -> None:
    """Output calls are read now (small); input histories only get a lazy loader."""
    outputs = (
        og.output_calls(attrs[og.OUTPUT_MESSAGES], None) if og.OUTPUT_MESSAGES in attrs else None,
        oi.output_calls(attrs) if oi.OUTPUT_FIRST in attrs or oi.OUTPUT_FIRST_CALL in attrs else None,
        ol.output_calls(attrs) if ol.COMPLETION_FIRST in attrs or ol.COMPLETION_FIRST_CALL in attrs else None,
    )
    llm.outputs.extend(ResponseOutput(calls, RESPONSE) for calls in outputs if calls)
    if og.INPUT_MESSAGES in attrs:
        llm.histories.append(genai_history(attrs[og.INPUT_MESSAGES], None))
    if oi.INPUT_FIRST in attrs:
        llm.histories.append(
            History(partial(oi.input_messages, attrs), True, False, partial(oi.assistant_turns, attrs))
        )
    if ol.PROMPT_FIRST in attrs:
        llm.histories.append(
            History(partial(ol.input_messages, attrs), True, False, partial(ol.assistant_turns, attrs))
        )


def _survivor(a: SpanView, b: SpanView) -> SpanView:
    """Of two copies of one span, the more complete one; identical copies are interchangeable."""

    def rank(s: SpanView) -> tuple[int, int, int, str]:
        return (len(s.attributes), s.end_ns or 0, len(s.events), text(s.attributes) or "")

    return a if rank(a) >= rank(b) else b


class _Collector:
    def __init__(self) -> None:
        self.llm_spans: dict[str, LLMSpan] = {}
        self.executions: list[Execution] = []
        self.definitions: list[DefinitionEntry] = []
        self.spans: dict[str, SpanView] = {}

    def span(self, span: SpanView) -> None:
        self.spans[span.span_id] = span
        attrs = span.attributes
        if not span.events and attrs.keys().isdisjoint(_MARKERS):
            return
        start = span.start_ns or 0
        operation, oi_kind = attrs.get(og.OPERATION), oi.kind(attrs)
        found = request_lists(attrs)
        execution = _execution(attrs, span, operation, oi_kind)
        if execution is not None:
            self.executions.append(execution)
            described = tool_span_list(execution.convention, attrs)
            found.extend([described] if described is not None else [])
        elif _is_llm(attrs, operation, oi_kind) or (span.events and span_events(span, start)):
            llm = self.llm_spans[span.span_id] = LLMSpan(
                span.span_id, span.span_id, start, start, span.end_ns, span.parent_span_id
            )
            _read_llm_span(attrs, llm)
            if span.events:
                events = Events()
                for name, fields, time_ns in span_events(span, start):
                    events.add(name, None, fields, time_ns, None)
                events.apply(llm, ordered_by_list=True)
                found.extend(events.definitions)
        for i, tools in enumerate(found):
            self.definitions.append((tools.tier, start, span.span_id, i, span.span_id, tools))

    def records(self, logs: Sequence[LogView]) -> None:
        """GenAI event records, grouped by the span they name (records naming a span that is not
        an LLM span make it one; records naming no span stand alone)."""
        by_span: dict[str, Events] = {}
        times: dict[str, int] = {}
        for record in {r.record_id: r for r in sorted(logs, key=lambda r: r.record_id)}.values():
            attrs = record.attributes if isinstance(record.attributes, dict) else {}
            name = og.event_name(record.event_name, attrs)
            if name not in og.EVENT_NAMES:
                continue
            key = record.span_id or "\x00" + record.record_id
            time_ns = record.time_ns or 0
            by_span.setdefault(key, Events()).add(name, record.body, attrs, time_ns, record.record_id)
            times[key] = min(times.get(key, time_ns), time_ns)
        for key in sorted(by_span):
            llm = self.llm_spans.get(key) or self._llm_for(key, times[key])
            by_span[key].apply(llm, ordered_by_list=False)
            for i, tools in enumerate(by_span[key].definitions):
                self.definitions.append((tools.tier, llm.time_ns, key, i, llm.span_id, tools))

    def _llm_for(self, key: str, time_ns: int) -> LLMSpan:
        span = self.spans.get(key)
        if span is not None:
            start = span.start_ns or 0
            llm = LLMSpan(key, key, start, start, span.end_ns, span.parent_span_id)
        else:
            llm = LLMSpan(key, None if key.startswith("\x00") else key, time_ns)
        self.llm_spans[key] = llm
        return llm


def _well_formed(span: SpanView) -> SpanView:
    """The view with attributes a dict and events a list, so readers need not check again."""
    if isinstance(span.attributes, dict) and isinstance(span.events, list):
        return span
    attrs = span.attributes if isinstance(span.attributes, dict) else {}
    return replace(span, attributes=attrs, events=span.events if isinstance(span.events, list) else [])


def _ordered(llm_spans: list[LLMSpan]) -> list[LLMSpan]:
    """LLM spans by time. Equal times (log records without their spans: openai-v2 stamps them 0;
    a fixed clock) are told apart by history depth, since a later request repeats more turns,
    then by span id."""
    times = Counter(llm.time_ns for llm in llm_spans)
    for llm in llm_spans:
        depth = max((_depth(h) for h in llm.histories), default=0) if times[llm.time_ns] > 1 else 0
        llm.order = f"{depth:09d}/{llm.key}"
    return sorted(llm_spans, key=lambda s: s.anchor)


def _depth(history: History) -> int:
    if history.assistant_turns is not None:
        return history.assistant_turns()
    return sum(isinstance(m, Turn) for m in history.load())


def collect(spans: Sequence[SpanView], logs: Sequence[LogView]) -> Collected:
    by_id: dict[str, SpanView] = {}
    for span in map(_well_formed, spans):
        seen = by_id.get(span.span_id)
        by_id[span.span_id] = span if seen is None else _survivor(seen, span)
    collector = _Collector()
    for span in sorted(by_id.values(), key=lambda s: (s.start_ns or 0, s.span_id)):
        collector.span(span)
    collector.records(logs)
    return Collected(
        _ordered(list(collector.llm_spans.values())),
        sorted(collector.executions, key=lambda e: (e.start_ns, e.span_id)),
        collector.definitions,
    )
