"""The OpenAI Agents SDK, traced by `openinference-instrumentation-openai-agents` or by
`opentelemetry-instrumentation-openai-agents-v2` (docs/conventions.md, "OpenAI Agents SDK").

Both record the model's response in a shape the base conventions do not read:
* OpenInference, streaming: no `llm.output_messages.*`; `output.value` is a JSON array holding the
  Responses-API `Response` the SDK rebuilt from the stream, its calls `output[]` items
  `{"type": "function_call", "call_id", "name", "arguments"}` (the model's argument text).
* OTel: `gen_ai.output.messages` is one text part whose content is the **Python repr** of the
  chat-completions message (`{'tool_calls': [{'id', 'function': {'name', 'arguments'}}]}`), or of
  the `Response` when streaming. It is read with `ast.literal_eval` (literals only: nothing runs),
  only for this instrumentation's spans and only up to `_MAX_REPR` characters.
Tool spans carry no call id in either; the merge pairs them by name and arguments.
"""

from __future__ import annotations

from typing import Any, Final

from traceladder.extract.conventions.attribute_values import (
    ABSENT,
    ARGS_EVENT,
    args_rank_of,
    as_dict,
    as_list,
    loads,
    name_text,
    python_literal,
)
from traceladder.extract.conventions.base import Convention, Messages, Side
from traceladder.extract.conventions.openinference import OUTPUT_FIRST, OUTPUT_FIRST_CALL
from traceladder.extract.conventions.otel_genai import OUTPUT_MESSAGES, openai_calls
from traceladder.extract.conventions.sightings import Sighting, sighting
from traceladder.extract.conventions.views import SpanView

OPENINFERENCE_SCOPE: Final = "openinference.instrumentation.openai_agents"
OTEL_SCOPE: Final = "opentelemetry.instrumentation.openai_agents"
NAME: Final = "openai_agents"
_MAX_REPR = 1_000_000


def response_items(response: Any) -> list[Sighting]:
    """The `function_call` items of a Responses-API response (a dict, or a list holding one)."""
    out: list[Sighting] = []
    for item in as_list(response) or [response]:
        for part in as_list((as_dict(item) or {}).get("output")) or ():
            part = as_dict(part)
            if part is not None and part.get("type") == "function_call":
                args = part.get("arguments", ABSENT)
                out.append(
                    sighting(
                        name_text(part.get("name")),
                        name_text(part.get("call_id")),
                        args,
                        args_rank_of(args, ARGS_EVENT),
                        NAME,
                        None,
                    )  # fmt: skip
                )
    return out


def _repr_value(text: Any) -> Any:
    """A Python literal the instrumentation wrote with repr(), or None."""
    if not isinstance(text, str) or not text.startswith("{") or len(text) > _MAX_REPR:
        return None
    return python_literal(text)


def _repr_messages(attrs: dict[str, Any]) -> list[Any]:
    out = []
    for message in as_list(attrs.get(OUTPUT_MESSAGES)) or ():
        for part in as_list((as_dict(message) or {}).get("parts")) or ():
            part = as_dict(part) or {}
            if part.get("type") == "text":
                value = _repr_value(part.get("content"))
                if isinstance(value, dict):
                    out.append(value)
    return out


class OpenAIAgents(Convention):
    name = NAME
    precedence = 5
    scopes = frozenset({OPENINFERENCE_SCOPE, OTEL_SCOPE})

    def response_calls(self, span: SpanView) -> list[Sighting]:
        attrs = span.attributes
        if span.scope_name == OPENINFERENCE_SCOPE:
            if OUTPUT_FIRST in attrs or OUTPUT_FIRST_CALL in attrs:
                return []  # non-streaming: OpenInference's own flattened messages have them
            return response_items(loads(attrs.get("output.value")))
        if span.scope_name == OTEL_SCOPE and OUTPUT_MESSAGES in attrs:
            out: list[Sighting] = []
            for value in _repr_messages(attrs):
                found = openai_calls(value.get("tool_calls"), None) or response_items(value)
                out.extend(s._replace(convention=NAME) for s in found)
            return out
        return []

    def messages(self, attrs: dict[str, Any], side: Side) -> Messages:
        if side != "out" or not any(_looks_like_repr(m) for m in as_list(attrs.get(OUTPUT_MESSAGES)) or ()):
            return []
        # the repr of a message dict: its `content` is the text (None for a tool-call turn)
        return [("assistant", v.get("content") if isinstance(v.get("content"), str) else None)
                for v in _repr_messages(attrs)]  # fmt: skip


def _looks_like_repr(message: Any) -> bool:
    for part in as_list((as_dict(message) or {}).get("parts")) or ():
        content = (as_dict(part) or {}).get("content")
        if isinstance(content, str) and content.startswith("{'") and "'role': 'assistant'" in content[:400]:
            return True
    return False


CONVENTION = OpenAIAgents()
