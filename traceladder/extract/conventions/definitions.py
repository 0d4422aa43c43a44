"""Tool definitions: the tool lists found on spans and records, and one definition per name.

"First seen wins", by tier, then time: a tool list a request sent (gen_ai.tool.definitions,
llm.tools.*, llm.request.functions.*, …: every convention's `request_definitions`) beats a tool
span describing itself (`tool_definition`), whatever their times; within a tier the earliest span
(start time, then span id), then the order on that span, then the position in the list.

A definition records where it was seen (`ToolDefinition.offered`): a list a request sent is what
the model was offered; a tool span's own description exists only for tools that ran, so a trace
whose definitions all come from tool spans does not know its whole tool set.

Lists are read lazily: every request of an agent repeats the same list, so a list whose identity
(its JSON text) equals one already read is skipped, and parsed text is memoised across traces.
"""

from __future__ import annotations

from functools import partial

from traceladder.extract.conventions.attribute_values import compact
from traceladder.extract.conventions.base import Convention
from traceladder.extract.conventions.sightings import (
    REQUEST,
    TOOL_SPAN_TIER,
    DefinitionEntry,
    DefinitionList,
    DefinitionSource,
)
from traceladder.extract.conventions.views import SpanView, ToolDefinition


def request_lists(span: SpanView, conventions: tuple[Convention, ...]) -> list[DefinitionList]:
    """The tool lists a request (span) carries, in every convention."""
    return [found for c in conventions for found in c.request_definitions(span)]


def tool_span_list(conventions: tuple[Convention, ...], span: SpanView) -> DefinitionList:
    """A tool span describing its own tool: a fallback for tools no request listed (the first
    convention, in precedence order, that reads a description from it)."""
    return DefinitionList(TOOL_SPAN_TIER, None, partial(_described, conventions, span))


def _described(conventions: tuple[Convention, ...], span: SpanView) -> list[DefinitionSource]:
    for convention in conventions:
        found = convention.tool_definition(span)
        if found is not None:
            return [found]
    return []


def choose(entries: list[DefinitionEntry]) -> list[ToolDefinition]:
    best: dict[str, tuple[DefinitionSource, str | None, int]] = {}
    read: set[object] = set()
    for tier, *_, span_id, tools in sorted(entries, key=lambda e: e[:4]):
        if tools.identity is not None:
            if tools.identity in read:
                continue
            read.add(tools.identity)
        for source in tools.load():
            best.setdefault(source.name, (source, span_id, tier))
    return [
        ToolDefinition(
            name, source.description, compact(source.parameters), source.convention, span_id, tier == REQUEST
        )
        for name, (source, span_id, tier) in sorted(best.items())
    ]
