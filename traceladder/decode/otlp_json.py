"""OTLP/JSON → the official protobuf request, via `json_format.ParseDict` after fixing the ids.

OTLP/JSON deviates from proto3 JSON: trace/span ids are hex, not base64 (`json_format` would
silently decode 32 hex chars as 24 wrong bytes), enums may be integers, int64 may be strings or
numbers, unknown fields must be ignored. Ids are converted first; base64 of exactly 16/8 bytes is
tolerated (some exporters send it). Both encodings then share one decoder, so they give the same
rows by construction. A span or record that does not fit the schema is rejected alone: the body is
re-parsed piecewise to isolate it, with `json_format`'s message as the reason.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord, ResourceLogs, ScopeLogs
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

from traceladder.decode.decoded import DecodeError
from traceladder.decode.protobuf import Overrides
from traceladder.decode.values import loads

_HEX = re.compile(r"(?:[0-9a-fA-F]{2})*")
_SPAN_IDS = {"traceId": 16, "spanId": 8, "parentSpanId": 8}
_LINK_IDS = {"traceId": 16, "spanId": 8}
# json_format reports most misfits as ParseError, but some shapes surface as these
_PARSE_ERRORS = (json_format.ParseError, ValueError, TypeError, AttributeError, RecursionError)


def load_object(body: bytes) -> dict[str, Any]:
    try:
        # `isspace`, not `strip`: the same test without copying a body of megabytes
        value = loads(body) if body and not body.isspace() else {}
    except ValueError as exc:  # orjson.JSONDecodeError is a ValueError
        raise DecodeError(f"invalid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise DecodeError(f"an OTLP/JSON body must be a JSON object, not {type(value).__name__}")
    return value


def json_id(value: Any, nbytes: int) -> tuple[str, str | None]:
    """An OTLP/JSON id → (proto3-JSON base64, problem or None). Hex of the wrong length is converted
    as-is so the decoder rejects it with the exact length."""
    if value is None or value == "":
        return "", None
    if not isinstance(value, str):
        return "", "is neither hex nor base64"
    if _HEX.fullmatch(value):
        return base64.b64encode(bytes.fromhex(value)).decode("ascii"), None
    if len(value) == 4 * ((nbytes + 2) // 3):
        try:
            raw = base64.b64decode(value.replace("-", "+").replace("_", "/"), validate=True)
        except (binascii.Error, ValueError):
            raw = b""
        if len(raw) == nbytes:
            return base64.b64encode(raw).decode("ascii"), None
    return "", "is neither hex nor base64"


def _fix_ids(obj: dict[str, Any], sizes: dict[str, int]) -> str | None:
    problem = None
    for key, n in sizes.items():
        if key in obj:
            obj[key], err = json_id(obj[key], n)
            if err is not None and problem is None:
                problem = f"{key} {err}"
    return problem


def _list(x: Any) -> list[Any]:
    return x if isinstance(x, list) else []


def _items(
    d: dict[str, Any], outer: str, middle: str, inner: str
) -> Iterator[tuple[tuple[int, int, int], dict[str, Any]]]:
    for ri, r in enumerate(_list(d.get(outer))):
        if isinstance(r, dict):
            for si, s in enumerate(_list(r.get(middle))):
                if isinstance(s, dict):
                    for ii, item in enumerate(_list(s.get(inner))):
                        if isinstance(item, dict):
                            yield (ri, si, ii), item


def _parse(d: dict[str, Any], message: Message) -> Message:
    return json_format.ParseDict(d, message, ignore_unknown_fields=True)


def _piecewise(
    d: dict[str, Any], names: tuple[str, str, str], classes: tuple[type, type, type, type], request: Message
) -> Overrides:
    """Parse level by level so one item that does not fit rejects only itself."""
    outer, middle, inner = names
    outer_cls, middle_cls, item_cls, _ = classes
    overrides: Overrides = {}
    for ri, r in enumerate(_list(d.get(outer))):
        r = dict(r) if isinstance(r, dict) else {}
        scopes = _list(r.pop(middle, None))
        try:
            r_msg = _parse(r, outer_cls())
        except _PARSE_ERRORS as exc:
            raise DecodeError(f"{outer}[{ri}]: {exc}") from None
        for si, s in enumerate(scopes):
            s = dict(s) if isinstance(s, dict) else {}
            items = _list(s.pop(inner, None))
            try:
                s_msg = _parse(s, middle_cls())
            except _PARSE_ERRORS as exc:
                raise DecodeError(f"{outer}[{ri}].{middle}[{si}]: {exc}") from None
            for ii, item in enumerate(items):
                try:
                    msg = _parse(item if isinstance(item, dict) else {}, item_cls())
                    if not isinstance(item, dict):
                        overrides[(ri, si, ii)] = f"{inner}[{ii}] is not a JSON object"
                except _PARSE_ERRORS as exc:
                    name = item.get("name") if isinstance(item.get("name"), str) else ""
                    msg = item_cls(name=name) if item_cls is Span else item_cls()
                    overrides[(ri, si, ii)] = f"does not fit the OTLP schema: {exc}"
                getattr(s_msg, inner_field(inner)).append(msg)
            getattr(r_msg, inner_field(middle)).append(s_msg)
        getattr(request, inner_field(outer)).append(r_msg)
    return overrides


def inner_field(json_name: str) -> str:
    """lowerCamelCase JSON name → protobuf field name."""
    return re.sub(r"[A-Z]", lambda m: "_" + m.group(0).lower(), json_name)


def trace_request(body: bytes | dict[str, Any]) -> tuple[ExportTraceServiceRequest, Overrides]:
    """The request as the official message, and the spans to reject with why (bad ids). Takes the
    body, or its object already parsed by `load_object` (which this changes in place)."""
    d = load_object(body) if isinstance(body, bytes) else body
    overrides: Overrides = {}
    for idx, span in _items(d, "resourceSpans", "scopeSpans", "spans"):
        if problem := _fix_ids(span, _SPAN_IDS):
            overrides[idx] = problem
        for link in _list(span.get("links")):
            if isinstance(link, dict):
                _fix_ids(link, _LINK_IDS)  # a bad link id becomes "" and the span is kept
    try:
        return _parse(d, ExportTraceServiceRequest()), overrides
    except _PARSE_ERRORS:
        pass
    request = ExportTraceServiceRequest()
    classes = (ResourceSpans, ScopeSpans, Span, ExportTraceServiceRequest)
    overrides |= _piecewise(d, ("resourceSpans", "scopeSpans", "spans"), classes, request)
    return request, overrides


def log_request(body: bytes) -> tuple[ExportLogsServiceRequest, Overrides]:
    d = load_object(body)
    overrides: Overrides = {}
    for idx, record in _items(d, "resourceLogs", "scopeLogs", "logRecords"):
        if problem := _fix_ids(record, _LINK_IDS):
            overrides[idx] = problem
    try:
        return _parse(d, ExportLogsServiceRequest()), overrides
    except _PARSE_ERRORS:
        pass
    request = ExportLogsServiceRequest()
    classes = (ResourceLogs, ScopeLogs, LogRecord, ExportLogsServiceRequest)
    overrides |= _piecewise(d, ("resourceLogs", "scopeLogs", "logRecords"), classes, request)
    return request, overrides
