"""OpenLLMetry (Traceloop): the flat `gen_ai.completion.{i}.tool_calls.{j}.{id,name,arguments}` /
`gen_ai.prompt.{k}.*` attributes of releases up to 0.54, `llm.request.functions.{i}.*`, and the
`traceloop.span.kind=tool` spans of the `@tool` decorator. (Current releases write OTel GenAI
`gen_ai.input/output.messages`, read by `otel_genai`.)

A decorated tool's span records the Python call, not the model's text: `traceloop.entity.input`
is `{"args": [...], "kwargs": {...}}` with the parsed arguments, `traceloop.entity.output` the
JSON-encoded return value. A call whose arguments do not parse never reaches the function, so it
has no tool span at all.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Final

from traceladder.extract.conventions.attribute_values import (
    ABSENT,
    ARGS_OPENLLMETRY_FLAT,
    ARGS_STRUCTURED,
    args_rank_of,
    flat_messages,
    indexed_fields,
    loads,
    name_text,
    text,
)
from traceladder.extract.conventions.base import LLM, TOOL, Convention, Messages, Role, Side, ToolColumns
from traceladder.extract.conventions.otel_genai import ERROR_TYPE, EXECUTE_TOOL, failure
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
)
from traceladder.extract.conventions.views import OPENLLMETRY, SpanView
from traceladder.instrumentation import semconv as sc

SPAN_KIND: Final = "traceloop.span.kind"
REQUEST_TYPE: Final = "llm.request.type"
COMPLETION_PREFIX: Final = "gen_ai.completion."
PROMPT_PREFIX: Final = "gen_ai.prompt."
# The first key of each list: probed before reading it (most spans carry none of them).
COMPLETION_FIRST: Final = COMPLETION_PREFIX + "0.role"
COMPLETION_FIRST_CALL: Final = COMPLETION_PREFIX + "0.tool_calls.0.name"
PROMPT_FIRST: Final = PROMPT_PREFIX + "0.role"
FUNCTIONS_FIRST: Final = "llm.request.functions.0.name"
_MISSING = object()


def is_tool_span(attrs: dict[str, Any]) -> bool:
    return attrs.get(SPAN_KIND) == "tool"


def is_llm(attrs: dict[str, Any]) -> bool:
    return attrs.get(REQUEST_TYPE) in ("chat", "completion") or COMPLETION_FIRST in attrs


def _kwargs(value: Any) -> Any:
    """The decorated function's keyword arguments (what the model's arguments parsed to)."""
    parsed = loads(value, _MISSING)
    if isinstance(parsed, dict) and set(parsed) <= {"args", "kwargs"} and not parsed.get("args"):
        return parsed.get("kwargs", {})
    return value


def _returned(value: Any) -> str | None:
    """`traceloop.entity.output` is the return value JSON-encoded: a tool returning a string is
    recorded as a JSON string literal, unwrapped here to the text the agent fed back."""
    parsed = loads(value, _MISSING)
    return parsed if isinstance(parsed, str) else text(value)


def execution(span: SpanView) -> Execution:
    attrs = span.attributes if isinstance(span.attributes, dict) else {}
    args = attrs.get("traceloop.entity.input", ABSENT)
    if args is not ABSENT:
        args = _kwargs(args)
    name = name_text(attrs.get("traceloop.entity.name")) or name_text(attrs.get(sc.TOOL_NAME))
    failed, error_type = failure(span)
    output = attrs.get("traceloop.entity.output")
    return Execution(
        span.span_id, span.parent_span_id, span.start_ns, span.end_ns, name,
        name_text(attrs.get(sc.TOOL_CALL_ID)) or None, args,
        # the parsed kwargs re-serialised, never the model's text: ranked with structured values
        args_rank_of(args, ARGS_STRUCTURED),
        _returned(output) if output is not None else None, failed, error_type, OPENLLMETRY,
    )  # fmt: skip


def _calls(fields: dict[str, Any], prefix: str) -> list[Sighting]:
    """`prefix` + `tool_calls.{j}.{id,name,arguments}`, densely numbered."""
    out = []
    for j in range(10_000):
        base = f"{prefix}tool_calls.{j}."
        name, call_id = fields.get(base + "name"), fields.get(base + "id")
        args = fields.get(base + "arguments", ABSENT)
        if name is None and call_id is None and args is ABSENT:
            break
        out.append(
            sighting(
                name_text(name),
                name_text(call_id),
                args,
                args_rank_of(args, ARGS_OPENLLMETRY_FLAT),
                OPENLLMETRY,
                None,
            )
        )
    return out


def output_calls(attrs: dict[str, Any]) -> list[Sighting]:
    out: list[Sighting] = []
    for i in range(1_000):
        base = f"{COMPLETION_PREFIX}{i}."
        if base + "role" not in attrs and base + "tool_calls.0.name" not in attrs:
            break
        out.extend(_calls(attrs, base))
    return out


def assistant_turns(attrs: dict[str, Any]) -> int:
    """Assistant messages in `gen_ai.prompt.*`, probed by index."""
    count = 0
    for i in range(100_000):
        role = attrs.get(f"{PROMPT_PREFIX}{i}.role")
        if role is None:
            return count
        count += role == "assistant"
    return count


def input_messages(attrs: dict[str, Any]) -> list[Message]:
    """`gen_ai.prompt.{k}.*` → history; tool messages carry `tool_call_id` and `content`."""
    messages = indexed_fields(attrs, PROMPT_PREFIX)
    out: list[Message] = []
    for i in sorted(messages):
        fields = messages[i]
        calls = _calls(fields, "")
        if calls:
            out.append(Turn(calls, None))
        if fields.get("role") == "tool":
            out.append(ToolResult(name_text(fields.get("tool_call_id")), text(fields.get("content")), None))
    return out


def definitions(attrs: dict[str, Any]) -> list[DefinitionSource]:
    """`llm.request.functions.{i}.{name,description,parameters}` (parameters: JSON text)."""
    out = []
    for i in range(10_000):
        base = f"llm.request.functions.{i}."
        name = attrs.get(base + "name")
        if name is None:
            break
        description = attrs.get(base + "description")
        if isinstance(name, str) and name:
            description = description if isinstance(description, str) else None
            out.append(DefinitionSource(name, description, attrs.get(base + "parameters"), OPENLLMETRY))
    return out


class OpenLLMetry(Convention):
    """OpenLLMetry (Traceloop): `traceloop.span.kind=tool` decorator spans, and the flat
    `gen_ai.prompt/completion.*` LLM spans of releases up to 0.54."""

    name = OPENLLMETRY
    precedence = 30
    markers = frozenset({SPAN_KIND, REQUEST_TYPE, COMPLETION_FIRST, PROMPT_FIRST, FUNCTIONS_FIRST})

    def role(self, span: SpanView) -> Role | None:
        attrs = span.attributes
        if is_tool_span(attrs):
            return TOOL
        return LLM if is_llm(attrs) else None

    def execution(self, span: SpanView) -> Execution | None:
        return execution(span)

    def response_calls(self, span: SpanView) -> list[Sighting]:
        attrs = span.attributes
        return output_calls(attrs) if COMPLETION_FIRST in attrs or COMPLETION_FIRST_CALL in attrs else []

    def histories(self, span: SpanView) -> list[History]:
        attrs = span.attributes
        if PROMPT_FIRST not in attrs:
            return []
        return [History(partial(input_messages, attrs), True, False, partial(assistant_turns, attrs))]

    def request_definitions(self, span: SpanView) -> list[DefinitionList]:
        if FUNCTIONS_FIRST not in span.attributes:
            return []
        return [DefinitionList(REQUEST, None, partial(definitions, span.attributes))]

    # tool_definition: the @tool decorator records no description, so none

    def messages(self, attrs: dict[str, Any], side: Side) -> Messages:
        return flat_messages(attrs, PROMPT_PREFIX if side == "in" else COMPLETION_PREFIX, side == "out")

    def tool_columns(self, attrs: dict[str, Any]) -> ToolColumns | None:
        return ToolColumns(
            EXECUTE_TOOL, text(attrs.get("traceloop.entity.name")), None,
            text(_kwargs(attrs["traceloop.entity.input"])) if "traceloop.entity.input" in attrs else None,
            text(attrs.get("traceloop.entity.output")), text(attrs.get(ERROR_TYPE)), OPENLLMETRY,
        )  # fmt: skip


CONVENTION = OpenLLMetry()
