"""The OpenAI Agents SDK on the Responses API (its default model), traced by
`opentelemetry-instrumentation-openai-agents-v2` (docs/conventions.md, "OpenAI Responses API").

That instrumentation writes each output item of a Responses-API response as one text part of
`gen_ai.output.messages` whose content is the item's **pydantic repr**:
`ResponseFunctionToolCall(arguments='{"location": "Paris"}', call_id='call_d1',
name='get_weather', type='function_call', id='fc_call_d1', ...)`. Its keyword values are Python
literals, so it is read with `ast.parse` and `ast.literal_eval` on each value — nothing runs, a
value that is not a literal is left out — only on this instrumentation's spans and only up to
`_MAX_REPR` characters. The OpenInference processor's Responses spans need nothing new (its
flattened `llm.output_messages.*` and, streaming, `output.value`, read by `openai_agents`).
"""

from __future__ import annotations

import ast
import re
from typing import Any, Final

from traceladder.extract.conventions.attribute_values import (
    ARGS_EVENT,
    args_rank_of,
    as_dict,
    as_list,
    name_text,
)
from traceladder.extract.conventions.base import Convention, Messages, Side
from traceladder.extract.conventions.frameworks.openai_agents import OTEL_SCOPE
from traceladder.extract.conventions.otel_genai import OUTPUT_MESSAGES
from traceladder.extract.conventions.sightings import Sighting, sighting
from traceladder.extract.conventions.views import SpanView

NAME: Final = "openai_responses"
_MAX_REPR = 1_000_000
_CONSTRUCTOR = re.compile(r"[A-Z][A-Za-z0-9_]*\(")


def constructor_repr(text: Any) -> tuple[str, dict[str, Any]] | None:
    """(class name, its literal keyword values) of a `Class(key=literal, ...)` repr, or None.
    Positional arguments and non-literal values are dropped; nothing is evaluated."""
    if not isinstance(text, str) or len(text) > _MAX_REPR or not _CONSTRUCTOR.match(text):
        return None
    try:
        node = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        return None
    values: dict[str, Any] = {}
    for keyword in node.keywords:
        if keyword.arg is None:
            continue
        try:
            values[keyword.arg] = ast.literal_eval(keyword.value)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    return node.func.id, values


def _items(attrs: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for message in as_list(attrs.get(OUTPUT_MESSAGES)) or ():
        for part in as_list((as_dict(message) or {}).get("parts")) or ():
            part = as_dict(part) or {}
            if part.get("type") == "text":
                found = constructor_repr(part.get("content"))
                if found is not None:
                    out.append(found)
    return out


class OpenAIResponses(Convention):
    name = NAME
    precedence = 5
    scopes = frozenset({OTEL_SCOPE})

    def response_calls(self, span: SpanView) -> list[Sighting]:
        if span.scope_name != OTEL_SCOPE or OUTPUT_MESSAGES not in span.attributes:
            return []
        out: list[Sighting] = []
        for _, item in _items(span.attributes):
            if item.get("type") == "function_call" and "name" in item:
                args = item.get("arguments")
                out.append(sighting(name_text(item.get("name")), name_text(item.get("call_id")), args,
                                    args_rank_of(args, ARGS_EVENT), NAME, None))  # fmt: skip
        return out

    def messages(self, attrs: dict[str, Any], side: Side) -> Messages:
        items = _items(attrs) if side == "out" else []
        # a tool-call item is no answer text: say so, or its repr would read as the answer
        return [("assistant", None) for _, item in items if item.get("type") == "function_call"]


CONVENTION = OpenAIResponses()
