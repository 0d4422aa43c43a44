"""OTel GenAI: execute_tool spans, chat spans' message attributes, and the event form (log records
or span events: gen_ai.choice, gen_ai.assistant.message, gen_ai.tool.message,
gen_ai.client.inference.operation.details).

Messages follow the GenAI JSON schemas (role + typed parts); they arrive as JSON text on spans and
structured in events. Older event bodies use OpenAI's shape ({tool_calls: [{id, function: {name,
arguments}}]}), which is also accepted inside messages, leniently.
"""

from __future__ import annotations

import re
from typing import Any, Final

from traceladder.conventions.sources import (
    DefinitionSource,
    Execution,
    Message,
    Sighting,
    ToolResult,
    Turn,
    sighting,
    tool_definitions,
)
from traceladder.conventions.values import (
    ABSENT,
    ARGS_EVENT,
    ARGS_PART_STRING,
    ARGS_TOOL_SPAN,
    args_rank_of,
    as_dict,
    as_list,
    name_text,
    text,
)
from traceladder.conventions.views import OTEL_GENAI, SpanView

OPERATION: Final = "gen_ai.operation.name"
EXECUTE_TOOL: Final = "execute_tool"
INFERENCE_OPERATIONS: Final = frozenset({"chat", "text_completion", "generate_content", "completion"})
INPUT_MESSAGES: Final = "gen_ai.input.messages"
OUTPUT_MESSAGES: Final = "gen_ai.output.messages"
TOOL_DEFINITIONS: Final = "gen_ai.tool.definitions"
TOOL_NAME: Final = "gen_ai.tool.name"
ERROR_TYPE: Final = "error.type"
# Our own agent loop records a failed tool's payload here (traceladder.instrumentation.semconv).
TOOL_ERROR_ATTRS: Final = ("traceladder.tool.error", "gen_ai.tool.error")

CHOICE: Final = "gen_ai.choice"
ASSISTANT_MESSAGE: Final = "gen_ai.assistant.message"
TOOL_MESSAGE: Final = "gen_ai.tool.message"
OPERATION_DETAILS: Final = "gen_ai.client.inference.operation.details"
EVENT_NAMES: Final = frozenset({CHOICE, ASSISTANT_MESSAGE, TOOL_MESSAGE, OPERATION_DETAILS})


def failure(span: SpanView) -> tuple[bool, str | None]:
    """(failed, error type) of an execution span: status ERROR or error.type; the type falls back
    to the `exception` event's exception.type (OpenInference records no error.type)."""
    attrs = span.attributes if isinstance(span.attributes, dict) else {}
    error_type = name_text(attrs.get(ERROR_TYPE))
    failed = span.status_code == "ERROR" or error_type is not None
    if failed and error_type is None:
        for event in span.events or ():
            if isinstance(event, dict) and event.get("name") == "exception":
                fields = event.get("attributes")
                if isinstance(fields, dict) and isinstance(fields.get("exception.type"), str):
                    error_type = fields["exception.type"]
                    break
    return failed, error_type


def execution(span: SpanView) -> Execution:
    attrs = span.attributes if isinstance(span.attributes, dict) else {}
    args = attrs.get("gen_ai.tool.call.arguments", ABSENT)
    result = attrs.get("gen_ai.tool.call.result")
    if result is None:
        result = next((attrs[k] for k in TOOL_ERROR_ATTRS if attrs.get(k) is not None), None)
    failed, error_type = failure(span)
    return Execution(
        span.span_id, span.parent_span_id, span.start_ns, span.end_ns,
        name_text(attrs.get(TOOL_NAME)), name_text(attrs.get("gen_ai.tool.call.id")) or None,
        args, args_rank_of(args, ARGS_TOOL_SPAN), text(result), failed, error_type, OTEL_GENAI,
    )  # fmt: skip


def openai_calls(tool_calls: Any, record_id: str | None) -> list[Sighting]:
    """OpenAI-shaped `tool_calls` ([{id, type, function: {name, arguments}}]) as in the legacy
    gen_ai.choice / gen_ai.assistant.message bodies: arguments are the model's string."""
    out = []
    for call in as_list(tool_calls) or ():
        call = as_dict(call)
        if call is None:
            continue
        function = as_dict(call.get("function")) or call
        args = function.get("arguments", ABSENT)
        out.append(
            sighting(
                name_text(function.get("name")),
                name_text(call.get("id")),
                args,
                args_rank_of(args, ARGS_EVENT),
                OTEL_GENAI,
                record_id,
            )
        )
    return out


def message_calls(message: dict[str, Any], record_id: str | None) -> list[Sighting]:
    """The tool calls of one message: GenAI `tool_call` parts, or OpenAI-shaped `tool_calls`."""
    out = []
    for part in as_list(message.get("parts")) or ():
        if isinstance(part, dict) and part.get("type") == "tool_call":
            args = part.get("arguments", ABSENT)
            out.append(
                sighting(
                    name_text(part.get("name")),
                    name_text(part.get("id")),
                    args,
                    args_rank_of(args, ARGS_PART_STRING),
                    OTEL_GENAI,
                    record_id,
                )
            )
    if "tool_calls" in message:
        out.extend(openai_calls(message["tool_calls"], record_id))
    return out


def output_calls(value: Any, record_id: str | None) -> list[Sighting]:
    """The tool calls of `gen_ai.output.messages` (one message per choice), in order."""
    out: list[Sighting] = []
    for message in as_list(value) or ():
        if isinstance(message, dict):
            out.extend(message_calls(message, record_id))
    return out


def input_messages(value: Any, record_id: str | None) -> list[Message]:
    """`gen_ai.input.messages` → history: assistant tool_call parts and tool_call_response parts
    (the result is under `response`; the spec's attribute table example says `result`)."""
    out: list[Message] = []
    for message in as_list(value) or ():
        if not isinstance(message, dict):
            continue
        calls = message_calls(message, record_id)
        if calls:
            out.append(Turn(calls, record_id))
        for part in as_list(message.get("parts")) or ():
            if isinstance(part, dict) and part.get("type") == "tool_call_response":
                response = part["response"] if "response" in part else part.get("result")
                out.append(ToolResult(name_text(part.get("id")), text(response), record_id))
    return out


# A role key with the value "assistant" in JSON text. Inside a JSON string every quote is escaped,
# so message content cannot match; only real keys (or an argument literally named "role") can.
_ASSISTANT_ROLE = re.compile(r'"role"\s*:\s*"assistant"')


def assistant_turns(value: Any) -> int:
    """How many assistant messages `gen_ai.input.messages` holds, without parsing JSON text."""
    if isinstance(value, str):
        return len(_ASSISTANT_ROLE.findall(value))
    return (
        sum(1 for m in value if isinstance(m, dict) and m.get("role") == "assistant")
        if isinstance(value, list)
        else 0
    )


def definitions(value: Any) -> list[DefinitionSource]:
    """`gen_ai.tool.definitions`: flat {type, name, description, parameters}; OpenAI's nested
    {type, function: {...}} is accepted too."""
    return tool_definitions(as_list(value) or (), OTEL_GENAI)


def execution_definition(attrs: dict[str, Any]) -> DefinitionSource | None:
    """An execute_tool span naming and describing its tool (no parameters schema)."""
    name, description = attrs.get(TOOL_NAME), attrs.get("gen_ai.tool.description")
    if isinstance(name, str) and name and isinstance(description, str):
        return DefinitionSource(name, description, None, OTEL_GENAI)
    return None


def event_name(name: Any, attrs: dict[str, Any]) -> str | None:
    """The event's name: the LogRecord field, else the pre-1.0 `event.name` attribute."""
    if isinstance(name, str) and name:
        return name
    legacy = attrs.get("event.name")
    return legacy if isinstance(legacy, str) else None


def event_payload(body: Any, attrs: dict[str, Any]) -> dict[str, Any]:
    """A legacy event's fields: the log body, or (span events have no body) the attributes."""
    payload = as_dict(body)
    return payload if payload is not None else attrs


def details_value(body: Any, attrs: dict[str, Any], key: str) -> Any:
    """operation.details carries messages as attributes; some SDKs put them in the body."""
    if key in attrs:
        return attrs[key]
    payload = as_dict(body)
    return payload.get(key) if payload is not None else None
