"""Reads one trace's spans and log records into sources, whatever convention produced them.

Each span is classified once, by the conventions in the registry (`registry.role_of`): a tool
execution (by attributes, never by span name: MCP tool spans are named `tools/call x`), an LLM
request/response, or neither. Input order never matters: spans
are deduplicated by span_id and log records by record_id (a re-sent duplicate resolves to the
same survivor whatever the order), and everything is sorted before `merge` looks at it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from traceladder.extract.conventions import otel_genai as og
from traceladder.extract.conventions import registry
from traceladder.extract.conventions.attribute_values import text
from traceladder.extract.conventions.base import LLM, TOOL
from traceladder.extract.conventions.definitions import request_lists, tool_span_list
from traceladder.extract.conventions.events import Events, span_events
from traceladder.extract.conventions.sightings import (
    DefinitionEntry,
    Execution,
    History,
    LLMSpan,
    ResponseOutput,
    Sighting,
    Turn,
)
from traceladder.extract.conventions.views import RESPONSE, LogView, SpanView


@dataclass(slots=True)
class Collected:
    llm_spans: list[LLMSpan]  # sorted by (time_ns, key)
    executions: list[Execution]  # sorted by (start_ns, span_id)
    definitions: list[DefinitionEntry]
    # every span's parent (span id → parent id): an execution nested in another of the same tool
    # may sit under spans of no convention's (execution_pairing.drop_nested walks through them)
    parents: dict[str, str | None] = field(default_factory=dict)


def _read_llm_span(span: SpanView, llm: LLMSpan, hooks: registry.Hooks) -> None:
    """Every convention's response calls (small) and input histories (lazy loaders)."""
    for convention in hooks.response_calls:
        calls = convention.response_calls(span)
        if calls:
            llm.outputs.append(ResponseOutput(calls, RESPONSE))
    for convention in hooks.histories:
        llm.histories.extend(convention.histories(span))


def _survivor(a: SpanView, b: SpanView) -> SpanView:
    """Of two copies of one span, the more complete one; identical copies are interchangeable."""

    def rank(s: SpanView) -> tuple[int, int, int, str]:
        return (len(s.attributes), s.end_ns or 0, len(s.events), text(s.attributes) or "")

    return a if rank(a) >= rank(b) else b


class _Collector:
    def __init__(self) -> None:
        self.hooks = registry.hooks()
        self.llm_spans: dict[str, LLMSpan] = {}
        self.executions: list[Execution] = []
        self.definitions: list[DefinitionEntry] = []
        self.spans: dict[str, SpanView] = {}
        self.carried: dict[str, list[Sighting]] = {}  # wrapping span id → the calls it carries
        self.skipped: set[str] = set()  # simulated users' spans (their log records are skipped too)

    def attach_carried(self) -> None:
        """Calls a wrapping span carries join the response of the one LLM span directly inside."""
        inside: dict[str, list[LLMSpan]] = {}
        for llm in self.llm_spans.values():
            if llm.parent_span_id in self.carried:
                inside.setdefault(llm.parent_span_id, []).append(llm)
        for parent, found in inside.items():
            if len(found) == 1:
                found[0].outputs.append(ResponseOutput(self.carried[parent], RESPONSE))

    def span(self, span: SpanView) -> None:
        self.spans[span.span_id] = span
        if registry.simulated_user(span):
            self.skipped.add(span.span_id)  # a simulated user's request: nothing of it is the agent's
            return
        if not span.events and span.attributes.keys().isdisjoint(self.hooks.markers):
            return
        hooks = registry.for_scope(self.hooks, span.scope_name)
        start = span.start_ns or 0
        found = request_lists(span, hooks.request_definitions)
        decided = registry.role_of(span, self.hooks)  # the stage's hooks: its role is decided once
        role, convention = decided if decided is not None else (None, None)
        execution = None
        if role == TOOL and convention is not None:
            execution = registry.execution_of(span, convention)
        if execution is not None:
            for other in hooks.refine_execution:
                execution = other.refine_execution(span, execution)
        for carrier in hooks.carried_calls:
            carried = carrier.carried_calls(span)
            if carried:
                self.carried.setdefault(span.span_id, []).extend(carried)
        if execution is not None and convention is not None:
            self.executions.append(execution)
            found.append(tool_span_list(hooks.tool_definition, span))
        elif role == LLM or (role is None and span.events and span_events(span, start)):
            llm = self.llm_spans[span.span_id] = LLMSpan(
                span.span_id, span.span_id, start, start, span.end_ns, span.parent_span_id
            )
            _read_llm_span(span, llm, hooks)
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
            if name not in og.EVENT_NAMES or record.span_id in self.skipped:
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
    collector.attach_carried()
    return Collected(
        _ordered(list(collector.llm_spans.values())),
        sorted(collector.executions, key=lambda e: (e.start_ns, e.span_id)),
        collector.definitions,
        {span_id: span.parent_span_id for span_id, span in by_id.items()},
    )
