"""The extraction stage reads the attributes the decoder parsed (issue 30: "no re-parse of what
decode parsed"). The OTLP/JSON walk keeps each span's attributes and events as it built them
(`DecodedBatch.parsed`), `ingest` hands them to the stage through `write_batch`, and the stage
reads them instead of parsing the row's JSON text again. That is only right if they are exactly
what the text parses to — same keys in the same order, same values of the same types — and if
the stage derives the very rows it derives from the text: both are checked on every Collector
JSON file of the fixtures (every producer, framework and conversation recorded)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pytest
from conftest import ROOT
from otlp_helpers import req_json, span_json

from traceladder.decode import decode_traces, json_walk
from traceladder.decode.bodies import JSON, PROTOBUF
from traceladder.decode.decoded import ParsedSpan
from traceladder.extract.stage import STAGE
from traceladder.receive.ingest.run import ingest
from traceladder.store.db import Store
from traceladder.store.derived import STORED_LOG_COLUMNS, STORED_SPAN_COLUMNS, Batch, TraceRows
from traceladder.store.spans import SPAN_COLUMNS
from traceladder.store.writes import write_batch

FIXTURES = ROOT / "tests" / "fixtures"
# Collector JSON (mostly the walk) and protobuf bodies (the protobuf row builder, which the exact
# OTLP/JSON path shares)
FILES = sorted(FIXTURES.rglob("collector-traces.jsonl")) + sorted(FIXTURES.rglob("traces-*.pb"))
_NONE = TraceRows(
    pa.table({c: pa.array([], pa.string()) for c in STORED_SPAN_COLUMNS}),
    pa.table({c: pa.array([], pa.string()) for c in STORED_LOG_COLUMNS}),
)


def _same(a: Any, b: Any) -> bool:
    """Equal and of the same types all the way down, keys in the same order (`==` takes 1 for
    1.0 and True for 1, and ignores a dict's order, all of which the stage can tell apart)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _bodies(path: Path) -> list[tuple[bytes, str]]:
    if path.suffix == ".pb":
        return [(path.read_bytes(), PROTOBUF)]
    return [(line, JSON) for line in path.read_bytes().splitlines() if line.strip()]


def _decoded(path: Path) -> tuple[pa.Table, list[ParsedSpan]]:
    tables, parsed = [], []
    for body, media_type in _bodies(path):
        batch = decode_traces(body, media_type)
        assert batch.parsed is not None, f"{path}: the decoder did not keep what it parsed"
        tables.append(batch.table)
        parsed.extend(batch.parsed)
    table = pa.concat_tables(tables)
    return table.append_column("source", pa.array(["file"] * table.num_rows, pa.string())), parsed


def test_the_fixtures_are_found() -> None:
    assert len(FILES) > 250


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_decoded_attributes_are_what_the_text_parses_to_and_give_the_same_rows(path: Path) -> None:
    table, parsed = _decoded(path)
    attributes = table.column("attributes").to_pylist()
    events = table.column("events").to_pylist()
    assert len(parsed) == table.num_rows
    for i, (attrs, evs) in enumerate(parsed):
        assert _same(attrs, orjson.loads(attributes[i])), f"{path} row {i}: attributes"
        assert _same(evs, orjson.loads(events[i])), f"{path} row {i}: events"
    spans = table.select(list(SPAN_COLUMNS))
    from_text = STAGE.extract(Batch(spans, None, _NONE), "")
    from_decoded = STAGE.extract(Batch(spans, None, _NONE, parsed), "")
    for name in from_text._fields:
        ours, theirs = getattr(from_decoded, name), getattr(from_text, name)
        assert ours == theirs if not hasattr(ours, "equals") else ours.equals(theirs), f"{path}: {name}"


def _one_tool_span(tool: str) -> tuple[pa.Table, list[ParsedSpan]]:
    attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool}
    row = {
        "trace_id": "1" * 32, "span_id": "2" * 16, "parent_span_id": None, "name": f"execute_tool {tool}",
        "kind": "INTERNAL", "start_ns": 1, "end_ns": 2, "status_code": "UNSET", "status_message": None,
        "attributes": orjson.dumps(attrs).decode(), "events": "[]", "links": "[]", "resource": "{}",
        "scope_name": None, "scope_version": None, "trace_state": None, "flags": 0, "source": "file",
    }  # fmt: skip
    return pa.Table.from_pylist([row]).select(list(SPAN_COLUMNS)), [(attrs, [])]


def test_the_stage_reads_the_decoded_attributes_not_the_text() -> None:
    """Handed both, the stage's calls come from the decoded attributes: the text is not read."""
    spans, _ = _one_tool_span("from_text")
    _, decoded = _one_tool_span("decoded")
    derived = STAGE.extract(Batch(spans, None, _NONE, decoded), "")
    assert derived.calls.column("tool_name").to_pylist() == ["decoded"]
    assert STAGE.extract(Batch(spans, None, _NONE), "").calls.column("tool_name").to_pylist() == ["from_text"]


def test_ingest_stores_what_a_write_from_the_text_stores(tmp_path: Path) -> None:
    """`ingest` hands the stage the decoded attributes; the store it writes equals one written from
    the rows' text alone (`write_batch` without them), table by table."""
    path = next(p for p in FILES if "conversations" in str(p) and p.suffix == ".jsonl")
    table, _ = _decoded(path)
    with Store(tmp_path / "ingest.duckdb") as ours, Store(tmp_path / "text.duckdb") as text:
        summary = ingest(ours, [str(path)])
        assert summary.new_spans == table.num_rows and not summary.problems
        write_batch(text, spans=table)
        tables = ("spans", "tool_calls", "tool_definitions", "traces", "trace_reading", "conversation_keys",
                  "prior_calls")  # fmt: skip
        for name in tables:
            clock = " EXCLUDE (first_seen, last_seen)" if name == "traces" else ""  # when, not what
            query = f"SELECT *{clock} FROM {name} ORDER BY ALL"
            assert ours.fetchall(query) == text.fetchall(query), name


_IRREGULAR = [  # values the walk leaves to the exact path (json_format, then the protobuf row builder)
    {"key": "b", "value": {"bytesValue": "aGk="}},
    {"key": "nan", "value": {"doubleValue": "NaN"}},
    {"key": "n", "value": {"intValue": "-9223372036854775808"}},
    {"key": "one", "value": {"doubleValue": 1}},
    {"key": "kv", "value": {"kvlistValue": {"values": [{"key": "x", "value": {"boolValue": True}}]}}},
    {"key": "list", "value": {"arrayValue": {"values": [{"stringValue": "a"}, {"intValue": 2}]}}},
    {"key": "b", "value": {"stringValue": "the last duplicate wins"}},
]


def test_the_exact_path_keeps_what_its_text_parses_to_as_well() -> None:
    events = [{"name": "e", "timeUnixNano": "5", "attributes": _IRREGULAR}]
    body = req_json(span_json(attributes=_IRREGULAR, events=events))
    with pytest.raises(json_walk.Irregular):
        json_walk.trace_rows(orjson.loads(body))
    batch = decode_traces(body, JSON)
    assert batch.table.num_rows == 1 and batch.parsed is not None
    attrs, evs = batch.parsed[0]
    assert _same(attrs, orjson.loads(batch.table.column("attributes")[0].as_py()))
    assert _same(evs, orjson.loads(batch.table.column("events")[0].as_py()))
    assert list(attrs) == ["b", "nan", "n", "one", "kv", "list"] and attrs["one"] == 1.0


def _unchecked_text(data: bytes) -> pa.Array:
    """One string value holding `data` as it is, UTF-8 or not (Arrow's casts would refuse it)."""
    offsets = pa.array([0, len(data)], pa.int32()).buffers()[1]
    return pa.Array.from_buffers(pa.string(), 1, [None, offsets, pa.py_buffer(data)])


def test_attribute_text_that_is_not_utf8_reads_as_its_text_with_replacements() -> None:
    """The stage parses the JSON columns from Arrow's bytes. Text that is not UTF-8 (the store
    refuses the row; the stage must not fail before it can) reads as it did when the stage built
    Python strings: the text with U+FFFD for the bytes that are not UTF-8."""
    spans, _ = _one_tool_span("tool\ufffd")
    text = spans.column("attributes")[0].as_py()
    assert STAGE.extract(Batch(spans, None, _NONE), "").calls.column("tool_name").to_pylist() == [
        "tool\ufffd"
    ]
    raw = text.encode().replace("\ufffd".encode(), b"\xff")
    broken = spans.set_column(spans.schema.get_field_index("attributes"), "attributes", _unchecked_text(raw))
    derived = STAGE.extract(Batch(broken, None, _NONE), "")
    assert derived.calls.column("tool_name").to_pylist() == ["tool\ufffd"]
