"""The extraction's input views (one span, one log record) and its output rows.

Views are what the store (or a test) hands in: flat OTel attributes keyed by full dotted names,
values as decoded (str/int/float/bool/list/dict). Outputs are plain NamedTuples so callers can
turn them into Arrow rows without conversion.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, NamedTuple

OTEL_GENAI: Final = "otel_genai"
OPENINFERENCE: Final = "openinference"
OPENLLMETRY: Final = "openllmetry"

# Where a call was found, best first (ExtractedCall.origin).
RESPONSE: Final = "response"  # an LLM span's output attributes
EVENT: Final = "event"  # an LLM output carried by a log record or span event
TOOL_SPAN: Final = "tool_span"  # a tool execution span
HISTORY: Final = "history"  # only in a later request's input messages
ORIGIN_RANK: Final = {RESPONSE: 0, EVENT: 1, TOOL_SPAN: 2, HISTORY: 3}

OK: Final = "ok"
ERROR: Final = "error"
UNKNOWN: Final = "unknown"


@dataclass(frozen=True, slots=True)
class SpanView:
    span_id: str
    parent_span_id: str | None
    name: str
    kind: str  # "INTERNAL", "CLIENT", ...
    start_ns: int
    end_ns: int
    status_code: str  # "UNSET" | "OK" | "ERROR"
    status_message: str | None
    attributes: dict[str, Any]  # flat OTel attributes, keys are full dotted names
    events: list[dict[str, Any]]  # [{"name": str, "time_ns": int, "attributes": dict}]
    scope_name: str | None


@dataclass(frozen=True, slots=True)
class LogView:
    """An OTLP LogRecord (OTel GenAI "events" are log records)."""

    record_id: str  # content hash, unique per record
    span_id: str | None  # the span the record belongs to (e.g. the chat span)
    time_ns: int
    event_name: str | None  # older producers put the name in attributes["event.name"]
    body: Any  # parsed AnyValue body (dict/list/str/None)
    attributes: dict[str, Any]
    scope_name: str | None


class ExtractedCall(NamedTuple):
    """One tool call of a trace, reported once however many sources showed it."""

    ordinal: int  # 1-based position in the trace
    tool_name: str
    call_id: str | None
    arguments_raw: str | None  # the argument text as the model emitted it, where a source kept it
    result: str | None  # tool span result/error payload, else the tool message fed back later
    status: str  # "ok" | "error" | "unknown" (no execution evidence)
    error_type: str | None
    convention: str  # of the source named by `origin`
    origin: str  # "response" | "event" | "tool_span" | "history"
    span_id: str | None  # execution span, else emitting response span, else where it was found
    response_span_id: str | None  # the LLM span whose response emitted the call, when known
    record_id: str | None  # the best log record it was read from, when it came from one
    turn: int | None  # 1-based index of the emitting response among the trace's LLM responses
    call_index: int | None  # 0-based index of the call within that response
    start_ns: int | None  # execution span's (else emitting response span's)
    end_ns: int | None


class ToolDefinition(NamedTuple):
    name: str
    description: str | None
    parameters: str | None  # JSON text of the parameters schema; None when not recorded
    convention: str
    span_id: str | None  # first span it was seen on
    offered: bool = True  # in a tool list a request sent; False: only a tool span describing itself


class TraceExtraction(NamedTuple):
    calls: list[ExtractedCall]
    definitions: list[ToolDefinition]  # one per tool name (first seen wins), ordered by name
    # calls the first request's input already held: made before the trace began, never its rows
    prior: tuple[ExtractedCall, ...] = ()
