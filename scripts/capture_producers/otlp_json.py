"""Protobuf OTLP bodies -> OTLP/JSON dicts, with the official opentelemetry-proto classes.

Used by capture.py to cross-check the real OTLP/JSON exporter's output against the
protobuf body captured for the same spans.

``json_format.MessageToDict`` gives base64 ids; OTLP/JSON wants lowercase hex for
traceId/spanId/parentSpanId (spans, span links, log records), so those are rewritten.
Everything else already follows the proto3 JSON mapping that OTLP/JSON uses:
lowerCamelCase keys, enums as integers (``use_integers_for_enums``), 64-bit integers
as decimal strings, bytesValue as base64.
"""

from __future__ import annotations

import base64
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

ID_KEYS = ("traceId", "spanId", "parentSpanId")


def parse_request(kind: str, body: bytes) -> Any:
    msg = ExportTraceServiceRequest() if kind == "traces" else ExportLogsServiceRequest()
    msg.ParseFromString(body)
    return msg


def _hex_ids(obj: dict[str, Any]) -> None:
    for key in ID_KEYS:
        if key in obj and obj[key]:
            obj[key] = base64.b64decode(obj[key]).hex()


def to_otlp_json(msg: Any) -> dict[str, Any]:
    data: dict[str, Any] = json_format.MessageToDict(
        msg, preserving_proto_field_name=False, use_integers_for_enums=True
    )
    for rs in data.get("resourceSpans", []):
        for ss in rs.get("scopeSpans", []):
            for span in ss.get("spans", []):
                _hex_ids(span)
                for link in span.get("links", []):
                    _hex_ids(link)
    for rl in data.get("resourceLogs", []):
        for sl in rl.get("scopeLogs", []):
            for rec in sl.get("logRecords", []):
                _hex_ids(rec)
    return data


def pb_to_otlp_json(kind: str, body: bytes) -> dict[str, Any]:
    return to_otlp_json(parse_request(kind, body))


def _b64_ids(obj: Any) -> Any:
    """OTLP/JSON's hex ids back to the proto3 JSON mapping's base64, everywhere in `obj`."""
    if isinstance(obj, dict):
        return {
            k: base64.b64encode(bytes.fromhex(v)).decode()
            if k in ID_KEYS and isinstance(v, str)
            else _b64_ids(v)
            for k, v in obj.items()
        }
    if isinstance(obj, list):
        return [_b64_ids(v) for v in obj]
    return obj


def same_message(kind: str, body: bytes, data: dict[str, Any]) -> bool:
    """Whether an OTLP/JSON request holds the same message as a protobuf body, read through the
    proto3 JSON mapping: the JS SDK's serializer writes default values (`droppedAttributesCount:
    0`, `events: []`) and 64-bit integers as JSON numbers, which MessageToDict does not — the
    same message, another spelling."""
    msg = ExportTraceServiceRequest() if kind == "traces" else ExportLogsServiceRequest()
    json_format.ParseDict(_b64_ids(data), msg)
    return bool(msg == parse_request(kind, body))
