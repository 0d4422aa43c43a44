"""Shared helpers of the OTLP decoding tests: OTLP/JSON builders, and the one OTLP/JSON decoder
beside its exact path alone (the walk's fallback, `otlp_json` + `json_format`)."""

from __future__ import annotations

import json
from typing import Any

import duckdb
import pyarrow as pa

from traceladder.decode import DecodedBatch, decode_traces
from traceladder.decode.otlp_json import trace_request
from traceladder.decode.protobuf import decode_trace_request

PB = "application/x-protobuf"
JS = "application/json"
JSON_COLS = ("attributes", "events", "links", "resource")

TID = "5b8efff798038103d269b633813fc60c"
SID = "eee19b7ec3c1b174"
PID = "eee19b7ec3c1b173"


# --------------------------------------------------------------------------- helpers
def rows(t: pa.Table) -> list[dict[str, Any]]:
    out = t.to_pylist()
    for r in out:
        for c in JSON_COLS:
            if c in r and r[c] is not None:
                r[c] = json.loads(r[c])
    return out


def assert_same(a: pa.Table, b: pa.Table) -> None:
    assert a.schema == b.schema
    assert rows(a) == rows(b)


def span_json(**over: Any) -> dict[str, Any]:
    sp: dict[str, Any] = {
        "traceId": TID,
        "spanId": SID,
        "parentSpanId": PID,
        "name": "execute_tool get_weather",
        "kind": 1,
        "startTimeUnixNano": "1796008934247672463",
        "endTimeUnixNano": "1796008934247815852",
        "attributes": [{"key": "gen_ai.tool.name", "value": {"stringValue": "get_weather"}}],
        "status": {},
        "flags": 256,
    }
    sp.update(over)
    return sp


def req_json(*spans: dict[str, Any], **extra: Any) -> bytes:
    d = {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": "weather-agent"}}]
                },
                "scopeSpans": [
                    {"scope": {"name": "my_agent.loop", "version": "0.1.0"}, "spans": list(spans)}
                ],
            }
        ]
    }
    d.update(extra)
    return json.dumps(d).encode()


def one(body: bytes, ct: str = JS) -> dict[str, Any]:
    b = decode_traces(body, ct)
    assert b.rejected == [], b.rejected
    (r,) = rows(b.table)
    return r


# --------------------------------------------------------------------------- helpers using both JSON paths
def batch_of(body: bytes, exact: bool, con: duckdb.DuckDBPyConnection) -> DecodedBatch:
    """The body decoded by the one decoder, or (`exact`) by its exact path alone."""
    if exact:
        return decode_trace_request(*trace_request(body))
    return decode_traces(body, JS)


def decoded(body: bytes, exact: bool, con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    b = batch_of(body, exact, con)
    assert b.rejected == [], b.rejected
    # and the decoder (its walk, where the request is plain) always agrees with the exact path
    assert rows(b.table) == rows(batch_of(body, not exact, con).table)
    return rows(b.table)
