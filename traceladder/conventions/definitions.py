"""Tool definitions: the tool lists found on spans and records, and one definition per name.

"First seen wins", by tier, then time: a tool list a request sent (gen_ai.tool.definitions,
llm.tools.*, llm.request.functions.*) beats a tool span describing itself (gen_ai.tool.description,
OpenInference tool.description/tool.parameters), whatever their times; within a tier the earliest
span (start time, then span id), then the order on that span, then the position in the list.

Lists are read lazily: every request of an agent repeats the same list, so a list whose JSON text
equals one already read is skipped, and parsed text is memoised across traces.
"""

from __future__ import annotations

from functools import lru_cache, partial
from typing import Any

from traceladder.conventions import openinference as oi
from traceladder.conventions import openllmetry as ol
from traceladder.conventions import otel_genai as og
from traceladder.conventions.sources import DefinitionEntry, DefinitionList, DefinitionSource
from traceladder.conventions.values import compact
from traceladder.conventions.views import OPENINFERENCE, OPENLLMETRY, OTEL_GENAI, ToolDefinition

REQUEST, TOOL_SPAN = 0, 1  # tiers


def request_lists(attrs: dict[str, Any]) -> list[DefinitionList]:
    """The tool lists a request (span or operation.details event) carries."""
    out = []
    if og.TOOL_DEFINITIONS in attrs:
        out.append(genai_list(attrs[og.TOOL_DEFINITIONS]))
    if oi.TOOLS_FIRST in attrs:
        schemas = oi.schemas(attrs)
        if all(isinstance(x, str) for x in schemas):
            out.append(DefinitionList(REQUEST, (OPENINFERENCE, schemas), partial(_openinference, schemas)))
        else:
            out.append(DefinitionList(REQUEST, None, partial(oi.definitions, schemas)))
    if ol.FUNCTIONS_FIRST in attrs:
        out.append(DefinitionList(REQUEST, None, partial(ol.definitions, attrs)))
    return out


def genai_list(value: Any) -> DefinitionList:
    if isinstance(value, str):
        return DefinitionList(REQUEST, (OTEL_GENAI, value), partial(_genai, value))
    return DefinitionList(REQUEST, None, partial(og.definitions, value))


# Results are never mutated, so sharing them between traces is safe.
@lru_cache(maxsize=64)
def _genai(value: str) -> list[DefinitionSource]:
    return [d._replace(parameters=compact(d.parameters)) for d in og.definitions(value)]


@lru_cache(maxsize=64)
def _openinference(schemas: tuple[str, ...]) -> list[DefinitionSource]:
    return [d._replace(parameters=compact(d.parameters)) for d in oi.definitions(schemas)]


_DESCRIBES = {OTEL_GENAI: og.execution_definition, OPENINFERENCE: oi.tool_span_definition}


def tool_span_list(convention: str, attrs: dict[str, Any]) -> DefinitionList | None:
    """A tool span describing its own tool: a fallback for tools no request listed."""
    if convention == OPENLLMETRY:
        return None  # the @tool decorator records no description
    return DefinitionList(TOOL_SPAN, None, partial(_described, convention, attrs))


def _described(convention: str, attrs: dict[str, Any]) -> list[DefinitionSource]:
    found = _DESCRIBES[convention](attrs)
    return [found] if found is not None else []


def choose(entries: list[DefinitionEntry]) -> list[ToolDefinition]:
    best: dict[str, tuple[DefinitionSource, str | None]] = {}
    read: set[object] = set()
    for *_, span_id, tools in sorted(entries, key=lambda e: e[:4]):
        if tools.identity is not None:
            if tools.identity in read:
                continue
            read.add(tools.identity)
        for source in tools.load():
            best.setdefault(source.name, (source, span_id))
    return [
        ToolDefinition(name, source.description, compact(source.parameters), source.convention, span_id)
        for name, (source, span_id) in sorted(best.items())
    ]
