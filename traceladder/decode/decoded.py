"""The row shapes OTLP decoding produces, and how decoding reports what it could not use.

A span row is the OTLP span as the store keeps it: OTLP fields, JSON text for
attributes/events/links/resource. What a convention reads from it (the tool columns, the span's
role) is the extraction stage's, not decoding's (`traceladder.extract`). A log row carries a
content hash, `record_id`, because OTLP log records have no identity of their own and ingesting
twice must add nothing."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

KIND_NAMES = ("UNSPECIFIED", "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER")
STATUS_NAMES = ("UNSET", "OK", "ERROR")

_S = pa.string()
TRACE_SCHEMA = pa.schema(
    [
        pa.field("trace_id", _S, nullable=False),
        pa.field("span_id", _S, nullable=False),
        pa.field("parent_span_id", _S),
        pa.field("name", _S, nullable=False),
        pa.field("kind", _S, nullable=False),
        pa.field("start_ns", pa.int64(), nullable=False),
        pa.field("end_ns", pa.int64(), nullable=False),
        pa.field("status_code", _S, nullable=False),
        pa.field("status_message", _S),
        pa.field("attributes", _S, nullable=False),
        pa.field("events", _S, nullable=False),
        pa.field("links", _S, nullable=False),
        pa.field("resource", _S, nullable=False),
        pa.field("scope_name", _S),
        pa.field("scope_version", _S),
        pa.field("trace_state", _S),
        pa.field("flags", pa.int32(), nullable=False),
    ]
)

LOG_SCHEMA = pa.schema(
    [
        pa.field("record_id", _S, nullable=False),
        pa.field("trace_id", _S),
        pa.field("span_id", _S),
        pa.field("time_ns", pa.int64(), nullable=False),
        pa.field("observed_time_ns", pa.int64(), nullable=False),
        pa.field("severity_number", pa.int32(), nullable=False),
        pa.field("severity_text", _S),
        pa.field("event_name", _S),
        pa.field("body", _S, nullable=False),
        pa.field("attributes", _S, nullable=False),
        pa.field("resource", _S, nullable=False),
        pa.field("scope_name", _S),
        pa.field("scope_version", _S),
    ]
)


class DecodeError(ValueError):
    """The body as a whole cannot be used (HTTP 400; nothing from it is stored)."""


@dataclass(frozen=True, slots=True)
class Rejected:
    """One span or log record left out of an otherwise accepted body."""

    resource_index: int
    scope_index: int
    index: int  # position inside its ScopeSpans / ScopeLogs
    trace_id: str  # hex of whatever bytes were sent ("" when missing)
    span_id: str
    name: str
    reason: str


# One span's attributes and events as the decoder parsed them: exactly what its `attributes` and
# `events` JSON texts parse back to (orjson writes the text from these very values).
ParsedSpan = tuple[dict[str, Any], list[dict[str, Any]]]


@dataclass(slots=True)
class DecodedBatch:
    """`table`: the rows; `rejected`: what was left out; `parsed`: per row of a trace batch, its
    attributes and events as decoded (`ParsedSpan`), so the extraction stage need not parse the
    text again — None for log records (and when dropped: `receive.ingest.parallel`'s worker processes)."""

    table: pa.Table
    rejected: list[Rejected] = field(default_factory=list)
    parsed: list[ParsedSpan] | None = None

    def message(self, limit: int = 5) -> str:
        """Developer-facing text for `partial_success.error_message` ("" when nothing was rejected)."""
        if not self.rejected:
            return ""
        shown = "; ".join(
            f"{r.reason} (item {r.index} of resource {r.resource_index} scope {r.scope_index}"
            f"{', ' + repr(r.name) if r.name else ''})"
            for r in self.rejected[:limit]
        )
        more = len(self.rejected) - limit
        return shown + (f"; and {more} more" if more > 0 else "")
