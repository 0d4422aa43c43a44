"""OTLP decoding, the unhappy paths: one bad span is rejected alone, whole-body problems raise, log
records decode alike from protobuf and JSON; the DuckDB bulk path agrees with the exact one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import otlp_workload as workload
import pyarrow as pa
import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span
from otlp_helpers import (
    JS,
    PB,
    SID,
    TID,
    batch_of,
    decoded,
    req_json,
    rows,
    span_json,
)

from traceladder.decode import LOG_SCHEMA, DecodeError, decode_logs, decode_traces
from traceladder.store import Store
from traceladder.store.derived import DERIVED_SPAN_COLUMNS as TOOL_COLUMNS
from traceladder.store.writes import write_batch


# --------------------------------------------------------------------------- rejections
@pytest.mark.parametrize("exact", [False, True])
def test_bad_trace_id_rejected_siblings_survive_json(exact: bool, con: duckdb.DuckDBPyConnection) -> None:
    good1 = span_json(spanId="0000000000000001")
    bad = span_json(spanId="0000000000000002", traceId=TID[:30])  # 15 bytes
    good2 = span_json(spanId="0000000000000003")
    b = batch_of(req_json(good1, bad, good2), exact, con)
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


@pytest.mark.parametrize("exact", [False, True])
def test_undecodable_id_rejected(exact: bool, con: duckdb.DuckDBPyConnection) -> None:
    b = batch_of(req_json(span_json(spanId="not-an-id!"), span_json(spanId="0000000000000009")), exact, con)
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


@pytest.mark.parametrize(
    "field",
    [
        {"startTimeUnixNano": "not a number"},
        {"endTimeUnixNano": [1]},
        {"attributes": [{"key": "n", "value": {"intValue": "forty"}}]},
        {"attributes": [{"key": "d", "value": {"doubleValue": "lots"}}]},
    ],
)
@pytest.mark.parametrize("exact", [False, True])
def test_mistyped_field_rejects_only_its_span(
    field: dict[str, Any], exact: bool, con: duckdb.DuckDBPyConnection
) -> None:
    bad = span_json(spanId="0000000000000002", **field)
    b = batch_of(
        req_json(span_json(spanId="0000000000000001"), bad, span_json(spanId="0000000000000003")), exact, con
    )
    assert b.table.column("span_id").to_pylist() == ["0000000000000001", "0000000000000003"]
    (rejected,) = b.rejected
    assert rejected.index == 1 and rejected.reason.startswith("does not fit the OTLP schema")


def _stored(body: bytes, exact: bool, con: duckdb.DuckDBPyConnection, db: Path) -> list[dict[str, Any]]:
    """The spans of `body` as the store keeps them once written: decoded, their tool columns
    derived by the extraction stage (decoding reads no convention)."""
    decoded(body, exact, con)  # usable, and both decoders agree
    table = batch_of(body, exact, con).table
    with Store(db) as store:
        write_batch(store, spans=table.append_column("source", pa.array(["test"] * table.num_rows)))
        return [dict(zip(TOOL_COLUMNS, r, strict=True)) for r in store.fetchall(
            f"SELECT {', '.join(TOOL_COLUMNS)} FROM spans ORDER BY operation"
        )]  # fmt: skip


@pytest.mark.parametrize("exact", [False, True])
def test_tool_columns_materialised(exact: bool, con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
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
    (c, t) = _stored(req_json(tool, chat), exact, con, tmp_path / "s.duckdb")
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


def test_openllmetry_tool_spans_are_materialised_as_openllmetry(tmp_path: Path) -> None:
    # OpenLLMetry 0.62 tool spans set gen_ai.tool.name without an operation name: the Traceloop
    # marker must win over the OTel fallback, or the span loses its arguments and result.
    from producers import FIXTURES

    body = (FIXTURES / "openllmetry" / "parallel" / "traces-001.pb").read_bytes()
    table = decode_traces(body, PB).table
    with Store(tmp_path / "s.duckdb") as store:
        write_batch(store, spans=table.append_column("source", pa.array(["test"] * table.num_rows)))
        stored = store.fetchall(f"SELECT {', '.join(TOOL_COLUMNS)} FROM spans")
    tools = [r for r in (dict(zip(TOOL_COLUMNS, row, strict=True)) for row in stored) if r["tool_name"]]
    assert len(tools) == 3
    assert {r["convention"] for r in tools} == {"openllmetry"}
    assert all(r["tool_arguments"] and r["tool_result"] for r in tools)
