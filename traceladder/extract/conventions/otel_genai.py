"""OTel GenAI: execute_tool spans, chat spans' message attributes, and the event form (log records
or span events: gen_ai.choice, gen_ai.assistant.message, gen_ai.tool.message,
gen_ai.client.inference.operation.details).

Messages follow the GenAI JSON schemas (role + typed parts); they arrive as JSON text on spans and
structured in events. Older event bodies use OpenAI's shape ({tool_calls: [{id, function: {name,
arguments}}]}), which is also accepted inside messages, leniently.
"""

from __future__ import annotations

import re
from functools import lru_cache, partial
from typing import Any, Final

from traceladder.extract.conventions.attribute_values import (
    ABSENT,
    ARGS_EVENT,
    ARGS_PART_STRING,
    ARGS_TOOL_SPAN,
    args_rank_of,
    as_dict,
    as_list,
    compact,
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
from traceladder.extract.conventions.views import OTEL_GENAI, SpanView
from traceladder.instrumentation import semconv as sc

# The names are the instrumentation's (one owner, the pinned conventions version); this module
# keeps its short aliases because the other conventions import them from here.
OPERATION: Final = sc.OPERATION_NAME
EXECUTE_TOOL: Final = sc.OP_EXECUTE_TOOL
INFERENCE_OPERATIONS: Final = frozenset({sc.OP_CHAT, "text_completion", "generate_content", "completion"})
INPUT_MESSAGES: Final = sc.INPUT_MESSAGES
OUTPUT_MESSAGES: Final = sc.OUTPUT_MESSAGES
TOOL_DEFINITIONS: Final = sc.TOOL_DEFINITIONS
TOOL_NAME: Final = sc.TOOL_NAME
TOOL_CALL_ID: Final = sc.TOOL_CALL_ID
TOOL_CALL_ARGUMENTS: Final = sc.TOOL_CALL_ARGUMENTS
TOOL_CALL_RESULT: Final = sc.TOOL_CALL_RESULT
ERROR_TYPE: Final = sc.ERROR_TYPE
# Our own agent loop records a failed tool's payload in TOOL_ERROR; some producers use gen_ai.tool.error.
TOOL_ERROR_ATTRS: Final = (sc.TOOL_ERROR, sc.TOOL_ERROR_GENAI)

CHOICE: Final = sc.EVENT_CHOICE
ASSISTANT_MESSAGE: Final = sc.EVENT_ASSISTANT_MESSAGE
TOOL_MESSAGE: Final = sc.EVENT_TOOL_MESSAGE
OPERATION_DETAILS: Final = sc.EVENT_OPERATION_DETAILS
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
                if isinstance(fields, dict) and isinstance(fields.get(sc.EXCEPTION_TYPE), str):
                    error_type = fields[sc.EXCEPTION_TYPE]
                    break
    return failed, error_type


def execution(span: SpanView) -> Execution:
    attrs = span.attributes if isinstance(span.attributes, dict) else {}
    args = attrs.get(TOOL_CALL_ARGUMENTS, ABSENT)
    result = attrs.get(TOOL_CALL_RESULT)
    if result is None:
        result = next((attrs[k] for k in TOOL_ERROR_ATTRS if attrs.get(k) is not None), None)
    failed, error_type = failure(span)
    return Execution(
        span.span_id, span.parent_span_id, span.start_ns, span.end_ns,
        name_text(attrs.get(TOOL_NAME)), name_text(attrs.get(TOOL_CALL_ID)) or None,
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


def block_calls(blocks: Any, record_id: str | None) -> list[Sighting]:
    """Bedrock Converse content blocks (`[{"toolUse": {"toolUseId", "name", "input"}}, …]`, as
    Strands and Bedrock producers record messages): the calls, arguments a parsed object."""
    out = []
    for block in as_list(blocks) or ():
        use = as_dict(block.get("toolUse")) if isinstance(block, dict) else None
        if use is not None:
            args = use.get("input", ABSENT)
            out.append(
                sighting(
                    name_text(use.get("name")),
                    name_text(use.get("toolUseId")),
                    args,
                    args_rank_of(args, ARGS_EVENT),
                    OTEL_GENAI,
                    record_id,
                )  # fmt: skip
            )
    return out


def block_results(blocks: Any, record_id: str | None) -> list[ToolResult]:
    """Bedrock `toolResult` blocks: the result text (its text blocks joined) per toolUseId."""
    out = []
    for block in as_list(blocks) or ():
        result = as_dict(block.get("toolResult")) if isinstance(block, dict) else None
        if result is not None:
            out.append(
                ToolResult(name_text(result.get("toolUseId")), blocks_text(result.get("content")), record_id)
            )
    return out


def blocks_text(blocks: Any) -> str | None:
    """The text of content blocks (`[{"text": …}, …]`, joined), else the value as text."""
    items = as_list(blocks)
    if items is None:
        return text(blocks)
    texts = [b["text"] for b in items if isinstance(b, dict) and isinstance(b.get("text"), str)]
    return "".join(texts) if texts else text(blocks)


def message_calls(message: dict[str, Any], record_id: str | None) -> list[Sighting]:
    """The tool calls of one message: GenAI `tool_call` parts, OpenAI-shaped `tool_calls`, or
    Bedrock content blocks in `content`."""
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
    content = message.get("content")
    if isinstance(content, list | str) and "toolUse" in (content if isinstance(content, str) else "toolUse"):
        # the botocore instrumentation writes a Bedrock assistant message twice over: its
        # `toolUse` blocks and, beside them, the same calls as `tool_calls` — one call each
        seen = {s.call_id for s in out if s.call_id is not None}
        out.extend(s for s in block_calls(content, record_id) if s.call_id is None or s.call_id not in seen)
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


def genai_history(value: Any, record_id: str | None) -> History:
    """`gen_ai.input.messages` (JSON text on spans, structured in events) as a lazy history."""
    loader, counter = partial(input_messages, value, record_id), partial(assistant_turns, value)
    return History(loader, True, not isinstance(value, str), counter)


def genai_list(value: Any) -> DefinitionList:
    """A `gen_ai.tool.definitions` value as a tool list a request sent (JSON text is its identity:
    every request of an agent repeats the same list, read once)."""
    if isinstance(value, str):
        return DefinitionList(REQUEST, (OTEL_GENAI, value), partial(_genai, value))
    return DefinitionList(REQUEST, None, partial(definitions, value))


# Results are never mutated, so sharing them between traces is safe.
@lru_cache(maxsize=64)
def _genai(value: str) -> list[DefinitionSource]:
    return [d._replace(parameters=compact(d.parameters)) for d in definitions(value)]


def execution_definition(attrs: dict[str, Any]) -> DefinitionSource | None:
    """An execute_tool span naming and describing its tool (no parameters schema)."""
    name, description = attrs.get(TOOL_NAME), attrs.get(sc.TOOL_DESCRIPTION)
    if isinstance(name, str) and name and isinstance(description, str):
        return DefinitionSource(name, description, None, OTEL_GENAI)
    return None


def event_name(name: Any, attrs: dict[str, Any]) -> str | None:
    """The event's name: the LogRecord field, else the pre-1.0 `event.name` attribute."""
    if isinstance(name, str) and name:
        return name
    legacy = attrs.get(sc.EVENT_NAME)
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


def _messages_text(value: Any) -> list[tuple[str | None, str | None]]:
    """(role, text) of GenAI messages: their text parts joined (or a plain `content` string)."""
    out = []
    for message in as_list(value) or ():
        if isinstance(message, dict):
            parts = as_list(message.get("parts"))
            if parts is None:
                out.append((text(message.get("role")), text(message.get("content"))))
                continue
            texts = [text(p.get("content")) for p in parts if isinstance(p, dict) and p.get("type") == "text"]
            out.append((text(message.get("role")), "".join(t for t in texts if t) or None))
    return out


class OtelGenAI(Convention):
    """OTel GenAI semantic conventions: `gen_ai.operation.name` decides the role; a span without
    it but with `gen_ai.tool.name` is a tool span (Pydantic AI, MCP servers), one with only message
    attributes an LLM span (OpenLLMetry's current releases)."""

    name = OTEL_GENAI
    precedence = 10
    markers = frozenset({OPERATION, TOOL_NAME, INPUT_MESSAGES, OUTPUT_MESSAGES, TOOL_DEFINITIONS})

    def role(self, span: SpanView) -> Role | None:
        operation = span.attributes.get(OPERATION)
        if operation is None:
            return None
        if operation == EXECUTE_TOOL:
            return TOOL
        # invoke_agent and other operations: their messages summarise a run, they request nothing
        return LLM if isinstance(operation, str) and operation in INFERENCE_OPERATIONS else OTHER

    def fallback_role(self, span: SpanView) -> Role | None:
        attrs = span.attributes
        if TOOL_NAME in attrs:
            return TOOL
        return LLM if OUTPUT_MESSAGES in attrs or INPUT_MESSAGES in attrs else None

    def execution(self, span: SpanView) -> Execution | None:
        return execution(span)

    def agent_name(self, span: SpanView) -> str | None:
        # gen_ai.agent.name, and the bare agent.name some SDKs write
        attrs = span.attributes
        return text(attrs.get(sc.AGENT_NAME, attrs.get("agent.name")))

    def response_calls(self, span: SpanView) -> list[Sighting]:
        value = span.attributes.get(OUTPUT_MESSAGES)
        return output_calls(value, None) if value is not None else []

    def histories(self, span: SpanView) -> list[History]:
        value = span.attributes.get(INPUT_MESSAGES)
        return [genai_history(value, None)] if value is not None else []

    def request_definitions(self, span: SpanView) -> list[DefinitionList]:
        value = span.attributes.get(TOOL_DEFINITIONS)
        return [genai_list(value)] if value is not None else []

    def tool_definition(self, span: SpanView) -> DefinitionSource | None:
        return execution_definition(span.attributes)

    def messages(self, attrs: dict[str, Any], side: Side) -> Messages:
        value = attrs.get(INPUT_MESSAGES if side == "in" else OUTPUT_MESSAGES)
        return _messages_text(value) if value is not None else []

    def tool_columns(self, attrs: dict[str, Any]) -> ToolColumns | None:
        result = attrs.get(TOOL_CALL_RESULT)
        if result is None:
            result = next((attrs[k] for k in TOOL_ERROR_ATTRS if attrs.get(k) is not None), None)
        return ToolColumns(
            EXECUTE_TOOL, text(attrs.get(TOOL_NAME)), text(attrs.get(TOOL_CALL_ID)),
            text(attrs.get(TOOL_CALL_ARGUMENTS)), text(result), text(attrs.get(ERROR_TYPE)), OTEL_GENAI,
        )  # fmt: skip


CONVENTION = OtelGenAI()
