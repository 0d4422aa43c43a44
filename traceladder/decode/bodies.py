"""Entry points: a decompressed OTLP/HTTP body and its content type → rows."""

from __future__ import annotations

from traceladder.decode import json_walk, otlp_json
from traceladder.decode.decoded import DecodedBatch, DecodeError
from traceladder.decode.protobuf import (
    decode_log_request,
    decode_trace_request,
    parse_log_request,
    parse_trace_request,
)

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
MEDIA_TYPES = (PROTOBUF, JSON)


def media_type(content_type: str | None) -> str:
    """The media type alone: `application/json; charset=utf-8` → `application/json`."""
    return (content_type or "").split(";", 1)[0].strip().lower()


def decode_traces(body: bytes, content_type: str | None) -> DecodedBatch:
    """An `ExportTraceServiceRequest` (protobuf or OTLP/JSON) → one row per usable span."""
    mt = media_type(content_type)
    if mt == PROTOBUF:
        return decode_trace_request(parse_trace_request(body))
    if mt == JSON:
        request = otlp_json.load_object(body)
        try:  # the plain shape every exporter sends, read straight; anything else: the exact path
            return json_walk.trace_rows(request)
        except (json_walk.Irregular, RecursionError):
            return decode_trace_request(*otlp_json.trace_request(request))
    raise DecodeError(f"unsupported content type {content_type!r}; send {PROTOBUF} or {JSON}")


def decode_logs(body: bytes, content_type: str | None) -> DecodedBatch:
    """An `ExportLogsServiceRequest` (protobuf or OTLP/JSON) → one row per usable log record."""
    mt = media_type(content_type)
    if mt == PROTOBUF:
        return decode_log_request(parse_log_request(body))
    if mt == JSON:
        return decode_log_request(*otlp_json.log_request(body))
    raise DecodeError(f"unsupported content type {content_type!r}; send {PROTOBUF} or {JSON}")
