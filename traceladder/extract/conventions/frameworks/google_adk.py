"""Google ADK (`gcp.vertex.agent` spans; captured with ADK 1.14 and an OpenAI-compatible model
through LiteLLM — docs/conventions.md, "Google ADK").

ADK records the model's exchange as google-genai JSON on its `call_llm` spans: the request in
`gcp.vertex.agent.llm_request` (`contents`, and `config.tools[].function_declarations[]` with
OpenAPI-style schemas: `"type": "OBJECT"`), the response in `gcp.vertex.agent.llm_response`
(`content.parts[].function_call` = `{id, name, args}`, arguments a parsed object). Its
`execute_tool` spans keep the arguments in `gcp.vertex.agent.tool_call_args` and the result in
`gcp.vertex.agent.tool_response` (`{"result": …}`); an `execute_tool (merged)` span that ADK adds
after parallel calls is bookkeeping, not a call. A call whose arguments do not parse stops ADK
inside `call_llm`: it appears nowhere in the trace.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Any, Final

from traceladder.extract.conventions import otel_genai as og
from traceladder.extract.conventions.attribute_values import (
    ABSENT,
    ARGS_STRUCTURED,
    args_rank_of,
    as_dict,
    as_list,
    name_text,
    text,
)
from traceladder.extract.conventions.base import LLM, OTHER, Convention, Messages, Role, Side
from traceladder.extract.conventions.gemini_schema import json_schema
from traceladder.extract.conventions.sightings import (
    REQUEST,
    DefinitionList,
    DefinitionSource,
    Execution,
    Sighting,
    sighting,
)
from traceladder.extract.conventions.views import SpanView

SCOPE: Final = "gcp.vertex.agent"
NAME: Final = "google_adk"
REQUEST_ATTR: Final = "gcp.vertex.agent.llm_request"
RESPONSE_ATTR: Final = "gcp.vertex.agent.llm_response"
MERGED: Final = "(merged tools)"


def _definitions(request: dict[str, Any]) -> list[DefinitionSource]:
    out = []
    for tool in as_list((as_dict(request.get("config")) or {}).get("tools")) or ():
        for fn in as_list((as_dict(tool) or {}).get("function_declarations")) or ():
            fn = as_dict(fn) or {}
            if isinstance(fn.get("name"), str) and fn["name"]:
                description = fn.get("description")
                parameters = fn.get("parameters")
                out.append(DefinitionSource(
                    fn["name"], description if isinstance(description, str) else None,
                    json_schema(parameters) if parameters is not None else None, NAME,
                ))  # fmt: skip
    return out


def _text_of(parts: Any) -> str | None:
    texts = [
        p["text"] for p in as_list(parts) or () if isinstance(p, dict) and isinstance(p.get("text"), str)
    ]
    return "".join(texts) or None


def _parts(value: Any) -> list[dict[str, Any]]:
    content = as_dict((as_dict(value) or {}).get("content"))
    return [p for p in as_list((content or {}).get("parts")) or () if isinstance(p, dict)]


class GoogleADK(Convention):
    name = NAME
    precedence = 5
    markers = frozenset({RESPONSE_ATTR, REQUEST_ATTR})
    scopes = frozenset({SCOPE})

    def role(self, span: SpanView) -> Role | None:
        if span.scope_name != SCOPE:
            return None
        attrs = span.attributes
        if attrs.get(og.TOOL_NAME) == MERGED:
            return OTHER
        return LLM if RESPONSE_ATTR in attrs and og.OPERATION not in attrs else None

    def response_calls(self, span: SpanView) -> list[Sighting]:
        if span.scope_name != SCOPE or RESPONSE_ATTR not in span.attributes:
            return []
        out = []
        for part in _parts(span.attributes[RESPONSE_ATTR]):
            call = as_dict(part.get("function_call"))
            if call is not None:
                args = call.get("args", ABSENT)
                out.append(sighting(name_text(call.get("name")), name_text(call.get("id")), args,
                                    args_rank_of(args, ARGS_STRUCTURED), NAME, None))  # fmt: skip
        return out

    def request_definitions(self, span: SpanView) -> list[DefinitionList]:
        request = as_dict(span.attributes.get(REQUEST_ATTR)) if span.scope_name == SCOPE else None
        if not request:
            return []
        return [DefinitionList(REQUEST, None, partial(_definitions, request))]

    def refine_execution(self, span: SpanView, execution: Execution) -> Execution:
        if span.scope_name != SCOPE:
            return execution
        attrs = span.attributes
        args = as_dict(attrs.get("gcp.vertex.agent.tool_call_args"))
        response = as_dict(attrs.get("gcp.vertex.agent.tool_response"))
        result = (
            text(response.get("result"))
            if response is not None and "result" in response
            else execution.result
        )
        if args is None:
            return replace(execution, result=result)
        return replace(execution, args=args, args_rank=ARGS_STRUCTURED, result=result, _canon=None)

    def messages(self, attrs: dict[str, Any], side: Side) -> Messages:
        if side == "in":
            request = as_dict(attrs.get(REQUEST_ATTR)) or {}
            contents = (as_dict(x) or {} for x in as_list(request.get("contents")) or ())
            return [(text(c.get("role")), _text_of(c.get("parts"))) for c in contents]
        if RESPONSE_ATTR not in attrs:
            return []
        return [("assistant", _text_of(_parts(attrs[RESPONSE_ATTR])))]


CONVENTION = GoogleADK()
