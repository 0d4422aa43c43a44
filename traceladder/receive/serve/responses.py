"""OTLP/HTTP response bodies: the Export*ServiceResponse on success (with `partial_success` when
items were rejected) and a `google.rpc.Status` for failures — in the request's encoding (protobuf
or OTLP/JSON), and JSON when the request's content type was not one of the two."""

from __future__ import annotations

from http import HTTPStatus

from google.protobuf import json_format
from google.protobuf.message import Message
from google.rpc import code_pb2, status_pb2
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from traceladder.decode.bodies import PROTOBUF, media_type

# HTTP status → the closest gRPC code, for Status.code
_CODES = {
    400: code_pb2.INVALID_ARGUMENT,
    401: code_pb2.UNAUTHENTICATED,
    404: code_pb2.NOT_FOUND,
    408: code_pb2.DEADLINE_EXCEEDED,
    405: code_pb2.UNIMPLEMENTED,
    411: code_pb2.INVALID_ARGUMENT,
    413: code_pb2.RESOURCE_EXHAUSTED,
    415: code_pb2.INVALID_ARGUMENT,
    429: code_pb2.RESOURCE_EXHAUSTED,
    500: code_pb2.INTERNAL,
    503: code_pb2.UNAVAILABLE,
}
JSON_TYPE = "application/json"


def _encode(message: Message, request_type: str | None) -> tuple[bytes, str]:
    if media_type(request_type) == PROTOBUF:
        return message.SerializeToString(), PROTOBUF
    # MessageToJson writes int64 as strings and lowerCamelCase names, as OTLP/JSON wants
    return json_format.MessageToJson(message, indent=None).encode(), JSON_TYPE


def success(signal: str, rejected: int, message: str, request_type: str | None) -> tuple[bytes, str]:
    response: Message
    if signal == "traces":
        response = ExportTraceServiceResponse()
        if rejected or message:
            response.partial_success.rejected_spans = rejected
            response.partial_success.error_message = message
    else:
        response = ExportLogsServiceResponse()
        if rejected or message:
            response.partial_success.rejected_log_records = rejected
            response.partial_success.error_message = message
    return _encode(response, request_type)


def failure(status: int, message: str, request_type: str | None) -> tuple[bytes, str]:
    return _encode(
        status_pb2.Status(code=_CODES.get(status, code_pb2.UNKNOWN), message=message), request_type
    )


def raw(status: int, message: str, *, retry_after: int | None = None) -> bytes:
    """A complete HTTP/1.1 answer (JSON `Status` body, `Connection: close`) for a connection on
    which no request was parsed: refused at the connection cap, or its head timed out."""
    body, content_type = failure(status, message, None)
    head = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}", f"Content-Type: {content_type}",
            f"Content-Length: {len(body)}", "Connection: close"]  # fmt: skip
    if retry_after is not None:
        head.append(f"Retry-After: {retry_after}")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body
