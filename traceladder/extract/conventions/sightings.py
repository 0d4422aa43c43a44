"""What the convention readers produce: every place one trace shows a tool call, before dedupe.

A reader turns one span or log record into *sources*: the calls an LLM response requested, a tool
execution, a request's input history (loaded lazily: histories are the bulk of a trace's bytes and
are often not needed), and tool definitions. `merge` dedupes them into one row per call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from traceladder.extract.conventions.attribute_values import ABSENT, ARGS_NONE, as_dict, canonical


class Sighting(NamedTuple):
    """One occurrence of a requested call in some source."""

    name: str | None
    call_id: str | None
    args: Any  # the raw text (str), a structured value, or ABSENT
    args_rank: int  # values.ARGS_*: lower is closer to what the model emitted
    convention: str
    record_id: str | None  # the log record it was read from, if any


def sighting(
    name: str | None, call_id: str | None, args: Any, args_rank: int, convention: str, record_id: str | None
) -> Sighting:
    if args is ABSENT or args is None:
        args_rank = ARGS_NONE
    return Sighting(name, call_id or None, args, args_rank, convention, record_id)


class ToolResult(NamedTuple):
    """A tool message in a request's input: the result fed back to the model."""

    call_id: str | None
    text: str | None
    record_id: str | None


class Turn(NamedTuple):
    """An assistant message with tool calls in a request's input history."""

    calls: list[Sighting]
    record_id: str | None


Message = Turn | ToolResult


@dataclass(slots=True)
class ResponseOutput:
    """The calls one LLM output requested, from one source (span attribute, record, or event)."""

    calls: list[Sighting]
    origin: str  # views.RESPONSE or views.EVENT


@dataclass(slots=True)
class Execution:
    """A tool execution span."""

    span_id: str
    parent_span_id: str | None
    start_ns: int
    end_ns: int
    name: str | None
    call_id: str | None
    args: Any  # raw text, structured, or ABSENT
    args_rank: int
    result: str | None
    failed: bool
    error_type: str | None
    convention: str
    _canon: tuple[str | None] | None = None  # lazily computed comparison key of `args`

    def canonical_args(self) -> str | None:
        if self._canon is None:
            self._canon = (canonical(self.args),)
        return self._canon[0]


@dataclass(slots=True)
class History:
    """One request's input history. `load` parses it on demand; `ordered` says whether the
    message order is known (attributes and span events: yes; log records with equal timestamps:
    no, they are a bag). `assistant_turns` counts its assistant messages without parsing it."""

    load: Callable[[], list[Message]]
    ordered: bool
    cheap: bool  # already structured: loading costs no JSON parse
    assistant_turns: Callable[[], int] | None = None


class DefinitionSource(NamedTuple):
    name: str
    description: str | None
    parameters: Any  # the schema as recorded (JSON text or structured), serialised only if chosen
    convention: str


def parameters_of(item: dict[str, Any]) -> Any:
    """A definition's parameters schema: OpenAI's `parameters`, MCP's `inputSchema`, or Bedrock's
    and Strands' `inputSchema: {"json": …}`; None when it has none of them."""
    if "parameters" in item:
        return item["parameters"]
    schema = item.get("inputSchema", item.get("input_schema"))
    wrapped = as_dict(schema)
    if wrapped is not None and set(wrapped) == {"json"}:
        return wrapped["json"]
    return schema


def tool_definitions(items: Any, convention: str) -> list[DefinitionSource]:
    """A recorded tool list — flat {type, name, description, parameters} or OpenAI's nested
    {type, function: {...}} — as definitions; entries without a name are skipped."""
    out = []
    for raw in items:
        item = as_dict(raw)
        if item is None:
            continue
        item = as_dict(item.get("function")) or item
        name, description = item.get("name"), item.get("description")
        if isinstance(name, str) and name:
            description = description if isinstance(description, str) else None
            out.append(DefinitionSource(name, description, parameters_of(item), convention))
    return out


REQUEST, TOOL_SPAN_TIER = 0, 1  # definition tiers: a tool list a request sent beats a tool span's own


class DefinitionList(NamedTuple):
    """A tool list found on a span or record, read only if it can still contribute."""

    tier: int  # 0: a tool list a request sent; 1: a tool span describing its own tool
    identity: Any  # hashable, equal for identical lists (each request repeats the same list)
    load: Callable[[], list[DefinitionSource]]


# (tier, anchor time, span key, order on the span, span id, list): see `definitions.choose`.
DefinitionEntry = tuple[int, int, str, int, str | None, DefinitionList]


@dataclass(slots=True)
class LLMSpan:
    """An LLM request/response: an inference span, or the span that event records name.

    `key` is the span id, or a pseudo id for records that name no span; `span_id` is None then.
    `time_ns` orders responses: the span's start, else the earliest record's time."""

    key: str
    span_id: str | None
    time_ns: int
    start_ns: int | None = None
    end_ns: int | None = None
    parent_span_id: str | None = None
    outputs: list[ResponseOutput] = field(default_factory=list)
    histories: list[History] = field(default_factory=list)
    turn: int = 0  # set by merge: its 1-based place among the trace's responses
    order: str = ""  # set by collect: sorts responses of equal time (collect._ordered)

    @property
    def anchor(self) -> tuple[int, str]:
        """Where the response sorts: its time, then the tie-break."""
        return (self.time_ns, self.order)
