"""Span rows: the stored shape (`SPAN_SCHEMA`), and converting SDK `ReadableSpan`s to it in bulk.

Our own exporter builds rows here; the OTLP receiver and file ingest get the same shape from
`traceladder.decode`. All of them write through `store.writes.write_batch`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind, StatusCode

from traceladder.decode.decoded import TRACE_SCHEMA
from traceladder.text import utf8_deep

# A span as it is handed to the store: the decoded OTLP row (traceladder.decode.decoded) plus where
# it came from. The store adds the columns the extraction stage derives (`store.derived`).
SPAN_SCHEMA = TRACE_SCHEMA.append(pa.field("source", pa.string(), nullable=False))
SPAN_COLUMNS = tuple(SPAN_SCHEMA.names)


def _plain(value: Any) -> Any:
    """Event attributes may hold tuples; JSON wants lists (json.dumps handles tuples natively,
    this is only for nested event payloads)."""
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


# Enum `.name` goes through a Python-level descriptor; a dict lookup is several times faster.
_KIND_NAMES = {kind: kind.name for kind in SpanKind}
_STATUS_NAMES = {code: code.name for code in StatusCode}
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode
_NO_EVENTS = "[]"
# OTLP span flags as the SDK's encoder sets them: bit 8 says bit 9 is known; bit 9 = remote parent.
_FLAGS_HAS_REMOTE = 0x100
_FLAGS_REMOTE = 0x200


def readable_span_columns(spans: Sequence[ReadableSpan], source: str) -> dict[str, list[Any]]:
    """Column lists (in `SPAN_SCHEMA` order) for a batch of SDK spans.

    This is the exporter's hot path: rows are built as tuples and transposed once in C, and JSON
    is encoded once per span (tuples serialise as arrays without conversion).
    """
    resource_cache: dict[int, str] = {}
    rows = []
    for span in spans:
        ctx = span.context
        assert ctx is not None  # finished SDK spans always carry their context
        attrs = dict(span.attributes or {})
        resource = resource_cache.get(id(span.resource))
        if resource is None:
            resource = resource_cache[id(span.resource)] = _dumps(dict(span.resource.attributes))
        scope = span.instrumentation_scope
        parent = span.parent
        status = span.status
        events = links = _NO_EVENTS
        if span.links:
            links = _dumps(
                [
                    {
                        "trace_id": format(link.context.trace_id, "032x"),
                        "span_id": format(link.context.span_id, "016x"),
                        "attributes": _plain(dict(link.attributes or {})),
                    }
                    for link in span.links
                ]  # fmt: skip
            )
        if span.events:
            events = _dumps(
                [
                    {
                        "name": e.name,
                        "time_ns": e.timestamp,
                        "attributes": _plain(dict(e.attributes or {})),
                    }
                    for e in span.events
                ]  # fmt: skip
            )
        rows.append(
            (
                format(ctx.trace_id, "032x"),
                format(ctx.span_id, "016x"),
                format(parent.span_id, "016x") if parent else None,
                span.name,
                _KIND_NAMES[span.kind],
                span.start_time,
                span.end_time,
                _STATUS_NAMES[status.status_code],
                status.description,
                _dumps(attrs),
                events,
                links,
                resource,
                scope.name if scope else None,
                scope.version if scope else None,
                ctx.trace_state.to_header() or None,
                _FLAGS_HAS_REMOTE | (_FLAGS_REMOTE if parent and parent.is_remote else 0),
                source,
            )
        )
    columns = zip(*rows, strict=True) if rows else ([] for _ in SPAN_COLUMNS)
    return {name: list(values) for name, values in zip(SPAN_COLUMNS, columns, strict=True)}


def to_arrow(columns: dict[str, list[Any]]) -> pa.Table:
    try:
        return pa.table(columns, schema=SPAN_SCHEMA)
    except UnicodeEncodeError:  # a lone surrogate (a decoded JSON "\ud800") in span data
        return pa.table({name: utf8_deep(column) for name, column in columns.items()}, schema=SPAN_SCHEMA)
