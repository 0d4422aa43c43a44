"""One OTLP/JSON decoder for `serve` and `ingest` (docs/decisions.md 371): on hostile bodies —
the shapes decision 361 probed, where DuckDB's bulk reader stored NULLs or lost spans — it answers
exactly as the exact path (`json_format`): the same rows, the same rejected spans with the same
reasons, or the same refusal of the whole request. And `ingest` and `serve` now store the same
spans of the same hostile file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import cli
from otlp_helpers import JS, req_json, rows, span_json
from receiver import ServeProcess

from traceladder.decode import DecodeError, decode_traces
from traceladder.decode.otlp_json import trace_request
from traceladder.decode.protobuf import decode_trace_request
from traceladder.store.db import open_store

_KV = {"key": "k", "value": {"stringValue": "v"}}


def _deep(depth: int) -> bytes:
    """A span whose attribute nests `depth` arrays (written as text: json.dumps would recurse)."""
    value = '{"arrayValue": {"values": [' * depth + '{"stringValue": "leaf"}' + "]}}" * depth
    marker = '"deep-marker"'
    body = req_json(span_json(attributes=[{"key": "d", "value": "deep-marker"}])).decode()
    return body.replace(marker, value).encode()


HOSTILE: dict[str, bytes] = {
    "attributes a string": req_json(span_json(attributes="k=v")),
    "attributes an object": req_json(span_json(attributes={"k": "v"})),
    "events a string": req_json(span_json(events="boom")),
    "events an object": req_json(span_json(events={"name": "x"})),
    "name a number": req_json(span_json(name=42)),
    "start time 1.5": req_json(span_json(startTimeUnixNano=1.5)),
    "start time negative": req_json(span_json(startTimeUnixNano=-1)),
    "start time past uint64": req_json(span_json(startTimeUnixNano=str(1 << 64))),
    "kind true": req_json(span_json(kind=True)),
    "kind 1.0": req_json(span_json(kind=1.0)),
    "kind unknown name": req_json(span_json(kind="SPAN_KIND_NOPE")),
    "status code a bad name": req_json(span_json(status={"code": "STATUS_CODE_NOPE"})),
    "status a list": req_json(span_json(status=[])),
    "intValue 1.5 as text": req_json(span_json(attributes=[{"key": "n", "value": {"intValue": "1.5"}}])),
    "doubleValue as text": req_json(span_json(attributes=[{"key": "d", "value": {"doubleValue": "x"}}])),
    "boolValue as text": req_json(span_json(attributes=[{"key": "b", "value": {"boolValue": "true"}}])),
    "stringValue a number": req_json(span_json(attributes=[{"key": "s", "value": {"stringValue": 5}}])),
    "two values in one": req_json(
        span_json(attributes=[{"key": "s", "value": {"stringValue": "a", "intValue": 1}}])
    ),
    "value null": req_json(span_json(attributes=[{"key": "s", "value": None}])),
    "bytesValue": req_json(span_json(attributes=[{"key": "b", "value": {"bytesValue": "aGk="}}])),
    "too deep": _deep(3000),
    "deep but fine": _deep(50),
    "spans null": b'{"resourceSpans": [{"scopeSpans": [{"spans": null}]}]}',
    "snake_case keys": json.dumps({"resource_spans": [{"scope_spans": [{"spans": [span_json()]}]}]}).encode(),
    "resource attributes a string": json.dumps(
        {"resourceSpans": [{"resource": {"attributes": "x"}, "scopeSpans": [{"spans": [span_json()]}]}]}
    ).encode(),
    "duplicate top-level key": b'{"resourceSpans": [], "resourceSpans": ' + req_json(span_json())[17:],
    "base64 ids": req_json(span_json(traceId="W47/95gDgQPSabYzgT/GDA==", spanId="7uGbfsPBsXQ=")),
    "zero trace id": req_json(span_json(traceId="0" * 32), span_json(spanId="eee19b7ec3c1b175")),
    "short span id": req_json(span_json(spanId="abc"), span_json(spanId="eee19b7ec3c1b175")),
    "uppercase hex": req_json(span_json(traceId="5B8EFFF798038103D269B633813FC60C")),
    "unknown field": req_json(span_json(someNewField={"x": 1}), extra=1),
    "a JSON array": b"[1, 2]",
    "a JSON number": b"42",
    "not JSON": b'{"resourceSpans": [',
}


def _outcome(decode: Any, body: bytes) -> tuple[Any, ...]:
    try:
        batch = decode(body)
    except DecodeError as exc:
        return ("refused", str(exc))
    return ("decoded", rows(batch.table), [(r.index, r.reason) for r in batch.rejected])


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_the_decoder_answers_a_hostile_body_as_the_exact_path(name: str) -> None:
    body = HOSTILE[name]
    exact = _outcome(lambda b: decode_trace_request(*trace_request(b)), body)
    assert _outcome(lambda b: decode_traces(b, JS), body) == exact


def test_a_span_of_the_wrong_json_type_is_rejected_with_its_reason_not_stored_as_nulls() -> None:
    batch = decode_traces(req_json(span_json(attributes="k=v"), span_json(spanId="eee19b7ec3c1b175")), JS)
    assert [r["span_id"] for r in rows(batch.table)] == ["eee19b7ec3c1b175"]
    (rejected,) = batch.rejected
    assert rejected.index == 0 and rejected.reason.startswith("does not fit the OTLP schema")


def test_ingest_and_serve_store_the_same_spans_of_a_hostile_file(tmp_path: Path) -> None:
    bodies = [req_json(span_json(spanId="eee19b7ec3c1b179"))] + [HOSTILE[n] for n in sorted(HOSTILE)]
    lines = tmp_path / "hostile.jsonl"
    lines.write_bytes(b"\n".join(b.replace(b"\n", b" ") for b in bodies) + b"\n")
    ingested = tmp_path / "ingest.duckdb"
    r = cli("ingest", "--db", str(ingested), str(lines))
    # the file holds bad requests: said in one line (exit 2), every usable span stored
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "problems" in r.stderr, r.stderr
    served = tmp_path / "serve.duckdb"
    with ServeProcess(served) as serve:
        statuses = [serve.post("/v1/traces", b, content_type=JS).status for b in bodies]
        code, err = serve.stop()
    assert code == 0, err
    refused = [_outcome(lambda b: decode_traces(b, JS), b)[0] == "refused" for b in bodies]
    assert [s == 400 for s in statuses] == refused and sum(refused) >= 3  # an array, a number, not JSON…
    query = "SELECT trace_id, span_id, name, attributes::VARCHAR FROM spans ORDER BY ALL"
    with open_store(ingested, read_only=True) as a, open_store(served, read_only=True) as b:
        stored = a.fetchall(query)
        assert stored == b.fetchall(query) and stored
