"""OTLP decoding: protobuf and OTLP/JSON give the same rows; the DuckDB bulk path (`otlp.shred`)
gives the same rows as the exact path; the OTLP/JSON traps (hex ids, int enums, int64 strings,
unknown fields) are handled; one bad span is rejected alone; whole-body problems raise."""

from __future__ import annotations

import base64
import json
from typing import Any

import duckdb
import otlp_workload as workload
import pyarrow as pa
import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue, KeyValueList
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

from traceladder.otlp import LOG_SCHEMA, TRACE_SCHEMA, DecodedBatch, DecodeError, decode_logs, decode_traces
from traceladder.otlp.shred import shred_traces

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


@pytest.fixture(scope="module")
def con() -> duckdb.DuckDBPyConnection:
    return duckdb.connect()


@pytest.fixture(scope="module")
def sdk_bodies() -> list[bytes]:
    spans = workload.make_spans(300, seed=7) + workload.make_spans(200, structured=True, seed=8)
    return workload.encode_requests(spans, batch=128)


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


# --------------------------------------------------------------------------- equality across encodings
def test_protobuf_and_json_give_identical_tables(sdk_bodies: list[bytes]) -> None:
    for body in sdk_bodies:
        p = decode_traces(body, PB)
        j = decode_traces(workload.to_otlp_json(body), JS)
        assert p.table.num_rows > 0 and not p.rejected and not j.rejected
        assert p.table.equals(j.table)  # byte-identical, not only equal once parsed


def test_duckdb_shredder_matches_protobuf_path(
    sdk_bodies: list[bytes], con: duckdb.DuckDBPyConnection
) -> None:
    p = pa.concat_tables([decode_traces(b, PB).table for b in sdk_bodies])
    table, rejected = shred_traces(con, [workload.to_otlp_json(b) for b in sdk_bodies])
    assert rejected == []
    assert_same(table, p)


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
@pytest.mark.parametrize("shred", [False, True])
def test_hex_ids_any_case(shred: bool, con: duckdb.DuckDBPyConnection) -> None:
    body = req_json(span_json(traceId=TID.upper(), spanId=SID.upper()))
    r = _decode(body, shred, con)[0]
    assert (r["trace_id"], r["span_id"], r["parent_span_id"]) == (TID, SID, PID)


@pytest.mark.parametrize("shred", [False, True])
def test_base64_ids_tolerated(shred: bool, con: duckdb.DuckDBPyConnection) -> None:
    b64t = base64.b64encode(bytes.fromhex(TID)).decode()  # 24 chars
    b64s = base64.b64encode(bytes.fromhex(SID)).decode()  # 12 chars
    assert (len(b64t), len(b64s)) == (24, 12)
    body = req_json(span_json(traceId=b64t, spanId=b64s, parentSpanId=""))
    r = _decode(body, shred, con)[0]
    assert (r["trace_id"], r["span_id"], r["parent_span_id"]) == (TID, SID, None)


@pytest.mark.parametrize("shred", [False, True])
def test_int64_as_string_and_number(shred: bool, con: duckdb.DuckDBPyConnection) -> None:
    a = span_json(
        startTimeUnixNano="1796008934247672463",
        attributes=[{"key": "n", "value": {"intValue": "47"}}],
    )
    b = span_json(
        spanId="eee19b7ec3c1b175",
        startTimeUnixNano=1796008934247672463,
        attributes=[{"key": "n", "value": {"intValue": 47}}],
    )
    ra, rb = _decode(req_json(a, b), shred, con)
    assert ra["start_ns"] == rb["start_ns"] == 1796008934247672463
    assert ra["attributes"] == rb["attributes"] == {"n": 47}


@pytest.mark.parametrize("shred", [False, True])
def test_enums_as_int_and_name(shred: bool, con: duckdb.DuckDBPyConnection) -> None:
    a = span_json(kind=3, status={"code": 2, "message": "boom"})
    b = span_json(
        spanId="eee19b7ec3c1b175",
        kind="SPAN_KIND_CLIENT",
        status={"code": "STATUS_CODE_ERROR", "message": "boom"},
    )
    c = span_json(spanId="eee19b7ec3c1b176", kind=99, status={"code": 1})  # open enum, out of range
    d = span_json(spanId="eee19b7ec3c1b177", kind="SPAN_KIND_SIDEWAYS")  # unknown name: the zero value
    ra, rb, rc, rd = _decode(req_json(a, b, c, d), shred, con)
    assert rd["kind"] == "UNSPECIFIED"
    assert (ra["kind"], ra["status_code"], ra["status_message"]) == ("CLIENT", "ERROR", "boom")
    assert (rb["kind"], rb["status_code"]) == ("CLIENT", "ERROR")
    assert (rc["kind"], rc["status_code"], rc["status_message"]) == ("UNSPECIFIED", "OK", None)


@pytest.mark.parametrize("shred", [False, True])
def test_unknown_fields_ignored(shred: bool, con: duckdb.DuckDBPyConnection) -> None:
    sp = span_json(futureField={"x": 1}, droppedAttributesCount=3)
    sp["attributes"][0]["value"]["futureValueField"] = 1
    sp["attributes"][0]["futureKvField"] = True
    body = req_json(sp, futureTopLevel=[1, 2])
    r = _decode(body, shred, con)[0]
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


@pytest.mark.parametrize("shred", [False, True])
@pytest.mark.parametrize("value,expected", ANY_CASES)
def test_anyvalue_shapes(
    value: dict[str, Any], expected: Any, shred: bool, con: duckdb.DuckDBPyConnection
) -> None:
    sp = span_json(attributes=[{"key": "k", "value": value}])
    r = _decode(req_json(sp), shred, con)[0]
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
    for shred in (False, True):
        assert _decode(req_json(sp), shred, con)[0]["attributes"] == {"k": "last"}


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
    for shred in (False, True):
        r = _decode(req_json(sp), shred, con)[0]
        assert r["events"] == [
            {"name": "exception", "time_ns": 5, "attributes": {"exception.type": "ValueError"}}
        ]
        assert r["links"] == [{"trace_id": TID, "span_id": PID, "attributes": {"w": 1}}]
    r = _decode(req_json(span_json()), False, con)[0]
    assert r["events"] == [] and r["links"] == []


# --------------------------------------------------------------------------- rejections
@pytest.mark.parametrize("shred", [False, True])
def test_bad_trace_id_rejected_siblings_survive_json(shred: bool, con: duckdb.DuckDBPyConnection) -> None:
    good1 = span_json(spanId="0000000000000001")
    bad = span_json(spanId="0000000000000002", traceId=TID[:30])  # 15 bytes
    good2 = span_json(spanId="0000000000000003")
    b = _batch(req_json(good1, bad, good2), shred, con)
    assert [r["span_id"] for r in rows(b.table)] == ["0000000000000001", "0000000000000003"]
    (rej,) = b.rejected
    assert rej.index == 1 and rej.span_id == "0000000000000002"
    assert rej.reason == "trace_id not 16 bytes (got 15)"


def test_bad_trace_id_rejected_siblings_survive_protobuf() -> None:
    mk = lambda tid, sid: Span(trace_id=tid, span_id=sid, name=sid.hex())  # noqa: E731
    spans = [
        mk(bytes.fromhex(TID), b"\x00" * 7 + b"\x01"),
        mk(bytes.fromhex(TID)[:15], b"\x00" * 7 + b"\x02"),
        mk(b"", b"\x00" * 7 + b"\x03"),
        mk(bytes.fromhex(TID), b"\x01" * 7),
        Span(trace_id=bytes.fromhex(TID), span_id=b"\x00" * 7 + b"\x05", parent_span_id=b"\x01\x02"),
        mk(bytes(16), b"\x00" * 7 + b"\x06"),
        mk(bytes.fromhex(TID), b"\x00" * 7 + b"\x07"),
    ]
    req = ExportTraceServiceRequest(resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=spans)])])
    b = decode_traces(req.SerializeToString(), PB)
    assert b.table.column("span_id").to_pylist() == ["0000000000000001", "0000000000000007"]
    assert [(r.index, r.reason) for r in b.rejected] == [
        (1, "trace_id not 16 bytes (got 15)"),
        (2, "trace_id missing"),
        (3, "span_id not 8 bytes (got 7)"),
        (4, "parent_span_id not 8 bytes (got 2)"),
        (5, "trace_id is all zeros"),
    ]
    assert len(b.rejected) == 5 and "trace_id not 16 bytes" in b.message()


@pytest.mark.parametrize("shred", [False, True])
def test_undecodable_id_rejected(shred: bool, con: duckdb.DuckDBPyConnection) -> None:
    b = _batch(req_json(span_json(spanId="not-an-id!"), span_json(spanId="0000000000000009")), shred, con)
    assert b.table.column("span_id").to_pylist() == ["0000000000000009"]
    assert [r.reason for r in b.rejected] == ["spanId is neither hex nor base64"]


def test_wrongly_typed_span_rejected_alone() -> None:
    bad = span_json(spanId="0000000000000002", startTimeUnixNano="not a number")
    b = decode_traces(req_json(span_json(spanId="0000000000000001"), bad), JS)
    assert b.table.column("span_id").to_pylist() == ["0000000000000001"]
    assert len(b.rejected) == 1 and b.rejected[0].reason.startswith("does not fit the OTLP schema")


# --------------------------------------------------------------------------- whole-body errors
def test_truncated_protobuf_raises_decode_error(sdk_bodies: list[bytes]) -> None:
    body = sdk_bodies[0]
    with pytest.raises(DecodeError) as ei:
        decode_traces(body[: len(body) // 2], PB)
    assert "protobuf" in str(ei.value)


def test_bad_json_and_content_type() -> None:
    with pytest.raises(DecodeError):
        decode_traces(b"{not json", JS)
    with pytest.raises(DecodeError):
        decode_traces(b"[1,2]", JS)
    with pytest.raises(DecodeError):
        decode_traces(b"", "text/plain")
    # media type only, parameters ignored; empty request = empty table
    assert decode_traces(b"", "application/x-protobuf; charset=utf-8").table.num_rows == 0
    assert decode_traces(b"{}", "Application/JSON; charset=utf-8").table.num_rows == 0


# --------------------------------------------------------------------------- logs
def test_logs_protobuf_and_json_identical() -> None:
    bodies = workload.make_log_requests(40, seed=3)
    for body in bodies:
        p = decode_logs(body, PB)
        j = decode_logs(workload.to_otlp_json(body, "logs"), JS)
        assert not p.rejected and p.table.equals(j.table)
    t = decode_logs(bodies[0], PB).table
    assert t.schema == LOG_SCHEMA
    r = t.to_pylist()
    assert r[0]["event_name"] == "gen_ai.client.inference.operation.details"
    assert json.loads(r[0]["body"])["input"][0]["role"] == "system"
    assert json.loads(r[0]["attributes"]) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "gpt-4o",
    }
    assert r[0]["trace_id"] is None and r[0]["span_id"] is None  # record 0 was emitted without context
    assert all(len(x["trace_id"]) == 32 for x in r[1:7])


def test_logs_bad_ids_rejected() -> None:
    d = {
        "resourceLogs": [
            {
                "scopeLogs": [
                    {
                        "logRecords": [
                            {"timeUnixNano": 1, "body": {"stringValue": "ok"}, "traceId": TID, "spanId": SID},
                            {"timeUnixNano": 2, "traceId": TID[:30]},
                            {
                                "timeUnixNano": "3",
                                "severityNumber": 9,
                                "body": {"kvlistValue": {"values": []}},
                            },
                        ]
                    }
                ]
            }
        ]
    }
    b = decode_logs(json.dumps(d).encode(), JS)
    r = b.table.to_pylist()
    assert [x["time_ns"] for x in r] == [1, 3]
    assert r[0]["body"] == '"ok"' and r[1]["body"] == "{}" and r[1]["severity_number"] == 9
    assert [x.reason for x in b.rejected] == ["trace_id not 16 bytes (got 15)"]
    with pytest.raises(DecodeError):
        decode_logs(ExportLogsServiceRequest().SerializeToString()[:0] + b"\x0a\x05", PB)


# --------------------------------------------------------------------------- helpers using both JSON paths
def _batch(body: bytes, shred: bool, con: duckdb.DuckDBPyConnection) -> DecodedBatch:
    if shred:
        table, rejected = shred_traces(con, [body])
        return DecodedBatch(table, [r for _, r in rejected])
    return decode_traces(body, JS)


def _decode(body: bytes, shred: bool, con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    b = _batch(body, shred, con)
    assert b.rejected == [], b.rejected
    if shred:  # and the DuckDB path always agrees with the json_format path
        assert rows(b.table) == rows(decode_traces(body, JS).table)
    return rows(b.table)


@pytest.mark.parametrize(
    "field",
    [
        {"startTimeUnixNano": "not a number"},
        {"endTimeUnixNano": [1]},
        {"attributes": [{"key": "n", "value": {"intValue": "forty"}}]},
        {"attributes": [{"key": "d", "value": {"doubleValue": "lots"}}]},
    ],
)
@pytest.mark.parametrize("shred", [False, True])
def test_mistyped_field_rejects_only_its_span(
    field: dict[str, Any], shred: bool, con: duckdb.DuckDBPyConnection
) -> None:
    bad = span_json(spanId="0000000000000002", **field)
    b = _batch(
        req_json(span_json(spanId="0000000000000001"), bad, span_json(spanId="0000000000000003")), shred, con
    )
    assert b.table.column("span_id").to_pylist() == ["0000000000000001", "0000000000000003"]
    (rejected,) = b.rejected
    assert rejected.index == 1 and rejected.reason.startswith("does not fit the OTLP schema")


def test_shredder_refuses_invalid_json_and_utf8(con: duckdb.DuckDBPyConnection) -> None:
    with pytest.raises(DecodeError):
        shred_traces(con, [req_json(span_json()), b'{"resourceSpans": [}'])
    with pytest.raises(DecodeError):
        shred_traces(con, [b'{"resourceSpans": [], "x": "\xff"}'])


def test_shredder_reports_which_body_a_rejection_came_from(con: duckdb.DuckDBPyConnection) -> None:
    bodies = [req_json(span_json()), req_json(span_json(spanId="zz"), span_json(spanId="0000000000000004"))]
    table, rejected = shred_traces(con, bodies)
    assert table.column("span_id").to_pylist() == [SID, "0000000000000004"]
    assert [(i, r.index, r.reason) for i, r in rejected] == [(1, 0, "spanId is neither hex nor base64")]


@pytest.mark.parametrize("shred", [False, True])
def test_tool_columns_materialised(shred: bool, con: duckdb.DuckDBPyConnection) -> None:
    tool = span_json(
        attributes=[
            {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
            {"key": "gen_ai.tool.name", "value": {"stringValue": "get_weather"}},
            {"key": "gen_ai.tool.call.id", "value": {"stringValue": "call_1"}},
            {"key": "gen_ai.tool.call.arguments", "value": {"stringValue": '{"location": "Paris"'}},
        ]
    )
    chat = span_json(
        spanId="0000000000000009",
        attributes=[
            {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
            {"key": "error.type", "value": {"stringValue": "timeout"}},
        ],
    )
    (t, c) = _decode(req_json(tool, chat), shred, con)
    assert (t["operation"], t["tool_name"], t["tool_call_id"], t["tool_arguments"], t["convention"]) == (
        "execute_tool",
        "get_weather",
        "call_1",
        '{"location": "Paris"',
        "otel_genai",
    )
    assert (c["operation"], c["tool_name"], c["error_type"]) == ("chat", None, "timeout")


def test_log_records_have_a_content_identity() -> None:
    body = workload.make_log_requests(12, seed=5)[0]
    a = decode_logs(body, PB).table.column("record_id").to_pylist()
    b = decode_logs(workload.to_otlp_json(body, "logs"), JS).table.column("record_id").to_pylist()
    assert a == b and len(set(a)) == len(a) and all(len(x) == 32 for x in a)


def test_openllmetry_tool_spans_are_materialised_as_openllmetry() -> None:
    # OpenLLMetry 0.62 tool spans set gen_ai.tool.name without an operation name: the Traceloop
    # marker must win over the OTel fallback, or the span loses its arguments and result.
    from producers import FIXTURES

    body = (FIXTURES / "openllmetry" / "parallel" / "traces-001.pb").read_bytes()
    tools = [r for r in decode_traces(body, PB).table.to_pylist() if r["tool_name"]]
    assert len(tools) == 3
    assert {r["convention"] for r in tools} == {"openllmetry"}
    assert all(r["tool_arguments"] and r["tool_result"] for r in tools)
