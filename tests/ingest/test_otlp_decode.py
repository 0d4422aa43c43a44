"""OTLP decoding: protobuf and OTLP/JSON give the same rows; the DuckDB bulk path (`otlp.exact`)
gives the same rows as the exact path; the OTLP/JSON traps (hex ids, int enums, int64 strings,
unknown fields) are handled (rejections and logs: test_otlp_rejections.py)."""

from __future__ import annotations

import base64
from typing import Any

import duckdb
import orjson
import otlp_workload as workload
import producers
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue, KeyValueList
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span
from otlp_helpers import (
    JS,
    PB,
    PID,
    SID,
    TID,
    decoded,
    one,
    req_json,
    rows,
    span_json,
)

from traceladder.decode import TRACE_SCHEMA, decode_traces, json_walk
from traceladder.decode.otlp_json import trace_request
from traceladder.decode.protobuf import decode_trace_request


# --------------------------------------------------------------------------- equality across encodings
def test_protobuf_and_json_give_identical_tables(sdk_bodies: list[bytes]) -> None:
    for body in sdk_bodies:
        p = decode_traces(body, PB)
        j = decode_traces(workload.to_otlp_json(body), JS)
        assert p.table.num_rows > 0 and not p.rejected and not j.rejected
        assert p.table.equals(j.table)  # byte-identical, not only equal once parsed


def test_the_walk_reads_plain_requests_into_the_exact_rows(sdk_bodies: list[bytes]) -> None:
    """The one OTLP/JSON decoder reads what exporters send by its walk — not by falling back to
    the exact path — and gives the exact path's rows, byte for byte."""
    bodies = [workload.to_otlp_json(b) for b in sdk_bodies]
    for scenario in sorted(producers.FIXTURES.glob("*/*/traces-*.pb")):
        bodies.append(workload.to_otlp_json(scenario.read_bytes()))
    for body in bodies:
        walked = json_walk.trace_rows(orjson.loads(body))  # raises Irregular if it fell back
        exact = decode_trace_request(*trace_request(body))
        assert not exact.rejected and walked.table.num_rows > 0
        assert walked.table.equals(exact.table)


def test_sdk_span_columns(sdk_bodies: list[bytes]) -> None:
    t = decode_traces(sdk_bodies[0], PB).table
    assert t.schema == TRACE_SCHEMA
    r = rows(t)
    kinds = {x["kind"] for x in r}
    assert kinds <= {"INTERNAL", "CLIENT"}
    for x in r:
        assert len(x["trace_id"]) == 32 and x["trace_id"] == x["trace_id"].lower()
        assert len(x["span_id"]) == 16
        assert x["resource"]["service.name"] == "weather-agent"
        assert x["scope_name"] == "my_agent.loop" and x["scope_version"] == "0.1.0"
        assert x["flags"] == 256
        assert x["end_ns"] >= x["start_ns"] > 0
    err = [x for x in r if x["status_code"] == "ERROR"]
    for x in err:
        assert x["status_message"].startswith("ValueError")
        assert x["events"][0]["name"] == "exception"
        assert "exception.stacktrace" in x["events"][0]["attributes"]


# --------------------------------------------------------------------------- OTLP/JSON quirks
@pytest.mark.parametrize("exact", [False, True])
def test_hex_ids_any_case(exact: bool, con: duckdb.DuckDBPyConnection) -> None:
    body = req_json(span_json(traceId=TID.upper(), spanId=SID.upper()))
    r = decoded(body, exact, con)[0]
    assert (r["trace_id"], r["span_id"], r["parent_span_id"]) == (TID, SID, PID)


@pytest.mark.parametrize("exact", [False, True])
def test_base64_ids_tolerated(exact: bool, con: duckdb.DuckDBPyConnection) -> None:
    b64t = base64.b64encode(bytes.fromhex(TID)).decode()  # 24 chars
    b64s = base64.b64encode(bytes.fromhex(SID)).decode()  # 12 chars
    assert (len(b64t), len(b64s)) == (24, 12)
    body = req_json(span_json(traceId=b64t, spanId=b64s, parentSpanId=""))
    r = decoded(body, exact, con)[0]
    assert (r["trace_id"], r["span_id"], r["parent_span_id"]) == (TID, SID, None)


@pytest.mark.parametrize("exact", [False, True])
def test_int64_as_string_and_number(exact: bool, con: duckdb.DuckDBPyConnection) -> None:
    a = span_json(
        startTimeUnixNano="1796008934247672463",
        attributes=[{"key": "n", "value": {"intValue": "47"}}],
    )
    b = span_json(
        spanId="eee19b7ec3c1b175",
        startTimeUnixNano=1796008934247672463,
        attributes=[{"key": "n", "value": {"intValue": 47}}],
    )
    ra, rb = decoded(req_json(a, b), exact, con)
    assert ra["start_ns"] == rb["start_ns"] == 1796008934247672463
    assert ra["attributes"] == rb["attributes"] == {"n": 47}


@pytest.mark.parametrize("exact", [False, True])
def test_enums_as_int_and_name(exact: bool, con: duckdb.DuckDBPyConnection) -> None:
    a = span_json(kind=3, status={"code": 2, "message": "boom"})
    b = span_json(
        spanId="eee19b7ec3c1b175",
        kind="SPAN_KIND_CLIENT",
        status={"code": "STATUS_CODE_ERROR", "message": "boom"},
    )
    c = span_json(spanId="eee19b7ec3c1b176", kind=99, status={"code": 1})  # open enum, out of range
    d = span_json(spanId="eee19b7ec3c1b177", kind="SPAN_KIND_SIDEWAYS")  # unknown name: the zero value
    ra, rb, rc, rd = decoded(req_json(a, b, c, d), exact, con)
    assert rd["kind"] == "UNSPECIFIED"
    assert (ra["kind"], ra["status_code"], ra["status_message"]) == ("CLIENT", "ERROR", "boom")
    assert (rb["kind"], rb["status_code"]) == ("CLIENT", "ERROR")
    assert (rc["kind"], rc["status_code"], rc["status_message"]) == ("UNSPECIFIED", "OK", None)


@pytest.mark.parametrize("exact", [False, True])
def test_unknown_fields_ignored(exact: bool, con: duckdb.DuckDBPyConnection) -> None:
    sp = span_json(futureField={"x": 1}, droppedAttributesCount=3)
    sp["attributes"][0]["value"]["futureValueField"] = 1
    sp["attributes"][0]["futureKvField"] = True
    body = req_json(sp, futureTopLevel=[1, 2])
    r = decoded(body, exact, con)[0]
    assert r["attributes"] == {"gen_ai.tool.name": "get_weather"}


ANY_CASES: list[tuple[dict[str, Any], Any]] = [
    ({"stringValue": ""}, ""),
    ({"boolValue": False}, False),
    ({"doubleValue": 1.5}, 1.5),
    ({"doubleValue": "NaN"}, "NaN"),
    ({"doubleValue": "-Infinity"}, "-Infinity"),
    ({"bytesValue": base64.b64encode(b"\x00\xffhi").decode()}, base64.b64encode(b"\x00\xffhi").decode()),
    ({}, None),
    ({"arrayValue": {}}, []),
    ({"arrayValue": {"values": [{"stringValue": "a"}, {"intValue": "2"}, {}]}}, ["a", 2, None]),
    (
        {"arrayValue": {"values": [{"stringValue": "stop"}, {"stringValue": "tool_calls"}]}},
        ["stop", "tool_calls"],
    ),
    (
        {
            "kvlistValue": {
                "values": [
                    {"key": "location", "value": {"stringValue": "Paris"}},
                    {"key": "days", "value": {"intValue": "3"}},
                    {
                        "key": "nested",
                        "value": {
                            "kvlistValue": {
                                "values": [
                                    {
                                        "key": "deep",
                                        "value": {
                                            "arrayValue": {
                                                "values": [
                                                    {
                                                        "kvlistValue": {
                                                            "values": [
                                                                {"key": "x", "value": {"boolValue": True}}
                                                            ]
                                                        }
                                                    }
                                                ]
                                            }
                                        },
                                    }
                                ]
                            }
                        },
                    },
                    {"key": "empty", "value": {}},
                ]
            }
        },
        {"location": "Paris", "days": 3, "nested": {"deep": [{"x": True}]}, "empty": None},
    ),
]


@pytest.mark.parametrize("exact", [False, True])
@pytest.mark.parametrize("value,expected", ANY_CASES)
def test_anyvalue_shapes(
    value: dict[str, Any], expected: Any, exact: bool, con: duckdb.DuckDBPyConnection
) -> None:
    sp = span_json(attributes=[{"key": "k", "value": value}])
    r = decoded(req_json(sp), exact, con)[0]
    assert r["attributes"] == {"k": expected}


def test_anyvalue_shapes_protobuf() -> None:
    v = AnyValue(
        kvlist_value=KeyValueList(
            values=[
                KeyValue(key="b", value=AnyValue(bytes_value=b"\x01\x02")),
                KeyValue(key="e", value=AnyValue()),
                KeyValue(
                    key="a",
                    value=AnyValue(
                        array_value=ArrayValue(values=[AnyValue(int_value=-5), AnyValue(double_value=2.5)])
                    ),
                ),
                KeyValue(key="s", value=AnyValue(string_value="")),
            ]
        )
    )
    sp = Span(
        trace_id=bytes.fromhex(TID),
        span_id=bytes.fromhex(SID),
        name="x",
        attributes=[KeyValue(key="v", value=v)],
    )
    req = ExportTraceServiceRequest(resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=[sp])])])
    r = one(req.SerializeToString(), PB)
    assert r["attributes"] == {
        "v": {"b": base64.b64encode(b"\x01\x02").decode(), "e": None, "a": [-5, 2.5], "s": ""}
    }
    assert r["parent_span_id"] is None and r["resource"] == {} and r["scope_name"] is None


def test_duplicate_attribute_keys_last_wins(con: duckdb.DuckDBPyConnection) -> None:
    sp = span_json(
        attributes=[
            {"key": "k", "value": {"stringValue": "first"}},
            {"key": "k", "value": {"stringValue": "last"}},
        ]
    )
    for exact in (False, True):
        assert decoded(req_json(sp), exact, con)[0]["attributes"] == {"k": "last"}


def test_events_and_links_json(con: duckdb.DuckDBPyConnection) -> None:
    sp = span_json(
        events=[
            {
                "name": "exception",
                "timeUnixNano": "5",
                "attributes": [{"key": "exception.type", "value": {"stringValue": "ValueError"}}],
            }
        ],
        links=[{"traceId": TID, "spanId": PID, "attributes": [{"key": "w", "value": {"intValue": 1}}]}],
    )
    for exact in (False, True):
        r = decoded(req_json(sp), exact, con)[0]
        assert r["events"] == [
            {"name": "exception", "time_ns": 5, "attributes": {"exception.type": "ValueError"}}
        ]
        assert r["links"] == [{"trace_id": TID, "span_id": PID, "attributes": {"w": 1}}]
    r = decoded(req_json(span_json()), False, con)[0]
    assert r["events"] == [] and r["links"] == []
