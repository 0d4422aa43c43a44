"""The Vercel AI SDK's own telemetry (`ai` npm package, `experimental_telemetry: {isEnabled: true}`,
tracer scope `ai`; docs/conventions.md, "Vercel AI SDK").

Every span names its operation in `ai.operationId`. One model request is an
`ai.generateText.doGenerate` / `ai.streamText.doStream` span (LLM): the calls the model requested
in `ai.response.toolCalls` (JSON `[{toolCallId, toolName, input}]` — `input` the model's argument
**text** on a plain request, on a streamed one the parsed object, the text again when it does not
parse), the request's messages in `ai.prompt.messages` (the system prompt, the user's message,
earlier `tool-call` parts with `input` parsed — `{}` for text that did not parse — and
`tool-result` parts), the tool list in `ai.prompt.tools` (a string array, one JSON definition each,
the schema under `inputSchema`), the answer in `ai.response.text`. A tool the SDK ran is an
`ai.toolCall` span: `ai.toolCall.name/id`, `ai.toolCall.args` (JSON.stringify of the *parsed*
input: not the model's text, read as structured) and `ai.toolCall.result` (JSON.stringify of the
tool's return value). The `ai.generateText` / `ai.streamText` span around the steps is bookkeeping.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Final

from traceladder.extract.conventions import otel_genai as og
from traceladder.extract.conventions.attribute_values import (
    ABSENT,
    ARGS_EVENT,
    ARGS_STRUCTURED,
    args_rank_of,
    as_dict,
    as_list,
    loads,
    name_text,
    text,
)
from traceladder.extract.conventions.base import (
    LLM,
    OTHER,
    TOOL,
    Convention,
    Messages,
    Role,
    Side,
    ToolColumns,
)
from traceladder.extract.conventions.sightings import (
    REQUEST,
    DefinitionList,
    DefinitionSource,
    Execution,
    History,
    Message,
    Sighting,
    ToolResult,
    Turn,
    sighting,
    tool_definitions,
)
from traceladder.extract.conventions.views import SpanView

SCOPE: Final = "ai"
NAME: Final = "vercel_ai"
OPERATION: Final = "ai.operationId"
TOOL_CALLS: Final = "ai.response.toolCalls"
PROMPT_MESSAGES: Final = "ai.prompt.messages"
PROMPT_TOOLS: Final = "ai.prompt.tools"
RESPONSE_TEXT: Final = "ai.response.text"
CALL_NAME: Final = "ai.toolCall.name"
CALL_ID: Final = "ai.toolCall.id"
CALL_ARGS: Final = "ai.toolCall.args"
CALL_RESULT: Final = "ai.toolCall.result"
TOOL_CALL: Final = "ai.toolCall"
# one model request each (generateObject/streamObject requests carry no tools)
_REQUESTS: Final = frozenset({"ai.generateText.doGenerate", "ai.streamText.doStream"})


def _operation(attrs: dict[str, Any]) -> str | None:
    value = attrs.get(OPERATION)
    return value if isinstance(value, str) else None


def _input(value: Any) -> tuple[Any, int]:
    """A call's `input` and its rank: text is what the model sent, an object the SDK's parse."""
    if value is None:
        return ABSENT, args_rank_of(ABSENT, ARGS_EVENT)
    return value, args_rank_of(value, ARGS_EVENT)


def _call(item: Any) -> Sighting | None:
    item = as_dict(item)
    if item is None:
        return None
    args, rank = _input(item.get("input", item.get("args")))  # `args`: the SDK before v5
    return sighting(
        name_text(item.get("toolName")), name_text(item.get("toolCallId")), args, rank, NAME, None
    )


def _content(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in as_list(message.get("content")) or () if isinstance(p, dict)]


def _result_text(output: Any) -> str | None:
    """A `tool-result` part's `output`: `{type: "text"|"error-text", value}` (v5 on), else as is."""
    wrapped = as_dict(output)
    if wrapped is not None and set(wrapped) >= {"type", "value"}:
        return text(wrapped["value"])
    return text(output)


def _history(value: Any) -> list[Message]:
    out: list[Message] = []
    for message in as_list(value) or ():
        message = as_dict(message)
        if message is None:
            continue
        parts = _content(message)
        calls = [c for p in parts if p.get("type") == "tool-call" if (c := _call(p)) is not None]
        if calls and message.get("role") == "assistant":
            # the SDK parsed these inputs (text that did not parse became {}): never the model's text
            out.append(Turn([c._replace(args_rank=ARGS_STRUCTURED) for c in calls], None))
        for part in parts:
            if part.get("type") == "tool-result":
                result = part.get("output", part.get("result"))
                out.append(ToolResult(name_text(part.get("toolCallId")), _result_text(result), None))
    return out


def _assistant_turns(value: Any) -> int:
    return sum(1 for m in as_list(value) or () if (as_dict(m) or {}).get("role") == "assistant")


def _definitions(value: Any) -> list[DefinitionSource]:
    return tool_definitions([loads(item, None) for item in as_list(value) or ()], NAME)


def _message_text(message: dict[str, Any]) -> str | None:
    content = message.get("content")
    if isinstance(content, str):
        return content
    texts = [
        p["text"] for p in _content(message) if p.get("type") == "text" and isinstance(p.get("text"), str)
    ]
    return "".join(texts) or None


def _unquoted(value: Any) -> str | None:
    """`ai.toolCall.result`: JSON.stringify of what the tool returned — a string tool's text."""
    parsed = loads(value, value)
    return parsed if isinstance(parsed, str) else text(parsed)


class VercelAI(Convention):
    name = NAME
    precedence = 5
    markers = frozenset({OPERATION, TOOL_CALLS, CALL_NAME, PROMPT_TOOLS})
    scopes = frozenset({SCOPE})

    def role(self, span: SpanView) -> Role | None:
        if span.scope_name != SCOPE:
            return None
        operation = _operation(span.attributes)
        if operation in _REQUESTS:
            return LLM
        if operation == TOOL_CALL:
            return TOOL
        return OTHER if operation is not None and operation.startswith("ai.") else None

    def agent_name(self, span: SpanView) -> str | None:
        if span.scope_name != SCOPE:
            return None
        return text(span.attributes.get("ai.telemetry.functionId"))

    def response_calls(self, span: SpanView) -> list[Sighting]:
        if span.scope_name != SCOPE or TOOL_CALLS not in span.attributes:
            return []
        return [c for item in as_list(span.attributes[TOOL_CALLS]) or () if (c := _call(item)) is not None]

    def histories(self, span: SpanView) -> list[History]:
        value = span.attributes.get(PROMPT_MESSAGES) if span.scope_name == SCOPE else None
        if value is None:
            return []
        return [History(partial(_history, value), True, False, partial(_assistant_turns, value))]

    def request_definitions(self, span: SpanView) -> list[DefinitionList]:
        value = span.attributes.get(PROMPT_TOOLS) if span.scope_name == SCOPE else None
        if value is None:
            return []
        identity = (NAME, tuple(value)) if isinstance(value, list | tuple) else None
        return [DefinitionList(REQUEST, identity, partial(_definitions, value))]

    def execution(self, span: SpanView) -> Execution | None:
        if span.scope_name != SCOPE or _operation(span.attributes) != TOOL_CALL:
            return None
        attrs = span.attributes
        args = loads(attrs[CALL_ARGS], attrs[CALL_ARGS]) if CALL_ARGS in attrs else ABSENT
        failed, error_type = og.failure(span)
        return Execution(
            span.span_id, span.parent_span_id, span.start_ns, span.end_ns,
            name_text(attrs.get(CALL_NAME)), name_text(attrs.get(CALL_ID)), args,
            ARGS_STRUCTURED if args is not ABSENT else args_rank_of(ABSENT, ARGS_STRUCTURED),
            _unquoted(attrs[CALL_RESULT]) if CALL_RESULT in attrs else None, failed, error_type, NAME,
        )  # fmt: skip

    def messages(self, attrs: dict[str, Any], side: Side) -> Messages:
        if side == "in":
            value = attrs.get(PROMPT_MESSAGES)
            messages = (as_dict(m) or {} for m in as_list(value) or ()) if value is not None else ()
            return [(text(m.get("role")), _message_text(m)) for m in messages]
        if RESPONSE_TEXT not in attrs and TOOL_CALLS not in attrs:
            return []
        return [("assistant", text(attrs.get(RESPONSE_TEXT)) or None)]

    def tool_columns(self, attrs: dict[str, Any]) -> ToolColumns | None:
        if _operation(attrs) != TOOL_CALL:
            return None
        result = _unquoted(attrs[CALL_RESULT]) if CALL_RESULT in attrs else None
        return ToolColumns(
            og.EXECUTE_TOOL, text(attrs.get(CALL_NAME)), text(attrs.get(CALL_ID)),
            text(attrs.get(CALL_ARGS)), result, None, NAME,
        )  # fmt: skip


CONVENTION = VercelAI()
