"""OpenInference (Arize): flattened `llm.output_messages.{i}.message.tool_calls.{j}.tool_call.*`
and `llm.input_messages.*` on LLM spans, `llm.tools.{i}.tool.json_schema`, and TOOL spans.

Argument strings on LLM spans are the model's text exactly. TOOL spans carry the arguments in
`input.value` and the result in `output.value`; the OITracer API has no call id, so `tool.id` /
`tool_call.id` are read when some instrumentation sets them.
"""

from __future__ import annotations

from functools import lru_cache, partial
from typing import Any, Final

from traceladder.extract.conventions.attribute_values import (
    ABSENT,
    ARGS_OPENINFERENCE,
    ARGS_TOOL_SPAN,
    args_rank_of,
    as_dict,
    compact,
    flat_messages,
    indexed_fields,
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
    tool_definitions,
)
from traceladder.extract.conventions.views import OPENINFERENCE, SpanView

SPAN_KIND: Final = "openinference.span.kind"
OUTPUT_PREFIX: Final = "llm.output_messages."
INPUT_PREFIX: Final = "llm.input_messages."
_CALL = "message.tool_calls."
# The first key of each list: probed before reading it (most spans carry none of them).
OUTPUT_FIRST: Final = OUTPUT_PREFIX + "0.message.role"
OUTPUT_FIRST_CALL: Final = OUTPUT_PREFIX + "0.message.tool_calls.0.tool_call.function.name"
INPUT_FIRST: Final = INPUT_PREFIX + "0.message.role"
TOOLS_FIRST: Final = "llm.tools.0.tool.json_schema"


def kind(attrs: dict[str, Any]) -> str | None:
    value = attrs.get(SPAN_KIND)
    return value.upper() if isinstance(value, str) else None


def looks_like_schema(value: Any) -> bool:
    """`tool.parameters` is a schema by the spec, but several instrumentations put the call's
    arguments there: only an object schema counts as a definition."""
    value = as_dict(value)
    return value is not None and (value.get("type") == "object" or isinstance(value.get("properties"), dict))


def execution(span: SpanView) -> Execution:
    attrs = span.attributes if isinstance(span.attributes, dict) else {}
    args = attrs.get("input.value", ABSENT)
    if args is ABSENT and "tool.parameters" in attrs and not looks_like_schema(attrs["tool.parameters"]):
        args = attrs["tool.parameters"]
    call_id = name_text(attrs.get("tool.id")) or name_text(attrs.get("tool_call.id")) or None
    failed, error_type = failure(span)
    return Execution(
        span.span_id, span.parent_span_id, span.start_ns, span.end_ns,
        name_text(attrs.get("tool.name")), call_id, args, args_rank_of(args, ARGS_TOOL_SPAN),
        text(attrs.get("output.value")), failed, error_type, OPENINFERENCE,
    )  # fmt: skip


def _call(fields: dict[str, Any], prefix: str) -> Sighting | None:
    """One flattened tool call: `prefix` + `tool_call.{id,function.name,function.arguments}`."""
    name = fields.get(prefix + "tool_call.function.name")
    call_id = fields.get(prefix + "tool_call.id")
    args = fields.get(prefix + "tool_call.function.arguments", ABSENT)
    if name is None and call_id is None and args is ABSENT:
        return None
    return sighting(
        name_text(name), name_text(call_id), args, args_rank_of(args, ARGS_OPENINFERENCE), OPENINFERENCE, None
    )


def output_calls(attrs: dict[str, Any]) -> list[Sighting]:
    """Probed key by key rather than scanning every attribute: an LLM span's keys are mostly its
    input history, and output messages are numbered densely by the instrumentation."""
    out: list[Sighting] = []
    for i in range(1_000):
        base = f"{OUTPUT_PREFIX}{i}."
        if base + "message.role" not in attrs and f"{base}{_CALL}0.tool_call.function.name" not in attrs:
            break
        for j in range(10_000):
            call = _call(attrs, f"{base}{_CALL}{j}.")
            if call is None:
                break
            out.append(call)
    return out


def assistant_turns(attrs: dict[str, Any]) -> int:
    """Assistant messages in `llm.input_messages.*`, probed by index (a gap stops the count,
    which can only make it disagree and the history be read)."""
    count = 0
    for i in range(100_000):
        role = attrs.get(f"{INPUT_PREFIX}{i}.message.role")
        if role is None:
            return count
        count += role == "assistant"
    return count


def input_messages(attrs: dict[str, Any]) -> list[Message]:
    """`llm.input_messages.*` → history. Scans the keys (histories may have gaps after
    redaction); tool messages answer `message.tool_call_id` with `message.content`."""
    messages = indexed_fields(attrs, INPUT_PREFIX)
    out: list[Message] = []
    for i in sorted(messages):
        fields = messages[i]
        calls = []
        for j in range(10_000):
            call = _call(fields, f"{_CALL}{j}.")
            if call is None:
                break
            calls.append(call)
        if calls:
            out.append(Turn(calls, None))
        if fields.get("message.role") == "tool":
            out.append(
                ToolResult(
                    name_text(fields.get("message.tool_call_id")), text(fields.get("message.content")), None
                )
            )
    return out


def schemas(attrs: dict[str, Any]) -> tuple[Any, ...]:
    """The `llm.tools.{i}.tool.json_schema` values, densely numbered (also the list's identity)."""
    out = []
    for i in range(10_000):
        schema = attrs.get(f"llm.tools.{i}.tool.json_schema")
        if schema is None:
            break
        out.append(schema)
    return tuple(out)


def definitions(schemas: tuple[Any, ...]) -> list[DefinitionSource]:
    """`llm.tools.{i}.tool.json_schema`: OpenAI's nested {type, function: {name, ...}}."""
    return tool_definitions(schemas, OPENINFERENCE)


def tool_span_definition(attrs: dict[str, Any]) -> DefinitionSource | None:
    """A TOOL span describing its tool (`tool.description`, `tool.parameters` when a schema)."""
    name, description, parameters = (
        attrs.get("tool.name"),
        attrs.get("tool.description"),
        attrs.get("tool.parameters"),
    )
    if not (isinstance(name, str) and name):
        return None
    schema = parameters if looks_like_schema(parameters) else None
    if not isinstance(description, str) and schema is None:
        return None
    return DefinitionSource(
        name, description if isinstance(description, str) else None, schema, OPENINFERENCE
    )


def request_list(attrs: dict[str, Any]) -> DefinitionList | None:
    """The `llm.tools.*` list of an LLM span (its JSON texts are its identity)."""
    if TOOLS_FIRST not in attrs:
        return None
    found = schemas(attrs)
    if all(isinstance(x, str) for x in found):
        return DefinitionList(REQUEST, (OPENINFERENCE, found), partial(_cached_definitions, found))
    return DefinitionList(REQUEST, None, partial(definitions, found))


@lru_cache(maxsize=64)
def _cached_definitions(found: tuple[str, ...]) -> list[DefinitionSource]:
    return [d._replace(parameters=compact(d.parameters)) for d in definitions(found)]


class OpenInference(Convention):
    """OpenInference (Arize): `openinference.span.kind` decides the role."""

    name = OPENINFERENCE
    precedence = 20
    markers = frozenset({SPAN_KIND, OUTPUT_FIRST, INPUT_FIRST, TOOLS_FIRST})

    def role(self, span: SpanView) -> Role | None:
        found = kind(span.attributes)
        if found is None:
            return None
        return TOOL if found == "TOOL" else LLM if found == "LLM" else OTHER  # AGENT, CHAIN, …

    def execution(self, span: SpanView) -> Execution | None:
        return execution(span)

    def agent_name(self, span: SpanView) -> str | None:
        return span.name if span.attributes.get(SPAN_KIND) == "AGENT" else None

    def response_calls(self, span: SpanView) -> list[Sighting]:
        attrs = span.attributes
        return output_calls(attrs) if OUTPUT_FIRST in attrs or OUTPUT_FIRST_CALL in attrs else []

    def histories(self, span: SpanView) -> list[History]:
        attrs = span.attributes
        if INPUT_FIRST not in attrs:
            return []
        return [History(partial(input_messages, attrs), True, False, partial(assistant_turns, attrs))]

    def request_definitions(self, span: SpanView) -> list[DefinitionList]:
        found = request_list(span.attributes)
        return [found] if found is not None else []

    def tool_definition(self, span: SpanView) -> DefinitionSource | None:
        return tool_span_definition(span.attributes)

    def messages(self, attrs: dict[str, Any], side: Side) -> Messages:
        return flat_messages(attrs, INPUT_PREFIX if side == "in" else OUTPUT_PREFIX, side == "out")

    def tool_columns(self, attrs: dict[str, Any]) -> ToolColumns | None:
        return ToolColumns(
            EXECUTE_TOOL, text(attrs.get("tool.name")), text(attrs.get("tool.id", attrs.get("tool_call.id"))),
            text(attrs.get("input.value", attrs.get("tool.parameters"))), text(attrs.get("output.value")),
            text(attrs.get(ERROR_TYPE)), OPENINFERENCE,
        )  # fmt: skip


CONVENTION = OpenInference()
