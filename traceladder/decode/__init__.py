"""OTLP in: request bodies (protobuf or OTLP/JSON, any content encoding) → Arrow span and log rows.

`decode_traces` / `decode_logs` take a decompressed body and its content type; `read_body` handles
`Content-Encoding` with a cap on the *decompressed* size. Whole-body problems raise `DecodeError`
(HTTP 400); a single bad span or log record is rejected alone (`DecodedBatch.rejected`).
"""

from traceladder.decode.bodies import decode_logs, decode_traces
from traceladder.decode.decoded import LOG_SCHEMA, TRACE_SCHEMA, DecodedBatch, DecodeError, Rejected

__all__ = [
    "LOG_SCHEMA",
    "TRACE_SCHEMA",
    "DecodeError",
    "DecodedBatch",
    "Rejected",
    "decode_logs",
    "decode_traces",
]
