"""The extraction stage reads each span's attributes text as a view of Arrow's buffer
(`extract.stage._text_views`), not as a copy. A table's column can be split into chunks, and a
chunk can start inside its buffers (a slice): whatever the layout, the stage reads the same texts,
so it derives the same rows."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from traceladder.decode import decode_traces
from traceladder.decode.bodies import PROTOBUF
from traceladder.extract.stage import STAGE
from traceladder.store.derived import STORED_LOG_COLUMNS, STORED_SPAN_COLUMNS, Batch, DerivedRows, TraceRows

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
_NONE = TraceRows(
    pa.table({c: pa.array([], pa.string()) for c in STORED_SPAN_COLUMNS}),
    pa.table({c: pa.array([], pa.string()) for c in STORED_LOG_COLUMNS}),
)


def _spans() -> pa.Table:
    bodies = sorted(FIXTURES.glob("frameworks/*/*/traces-*.pb"))
    table = pa.concat_tables(decode_traces(p.read_bytes(), PROTOBUF).table for p in bodies)
    return table.append_column("source", pa.array(["test"] * table.num_rows, pa.string()))


def _rows(derived: DerivedRows) -> dict[str, list[dict[str, object]]]:
    assert derived.spans is not None
    return {
        "spans": derived.spans.to_pylist(),
        "calls": derived.calls.to_pylist(),
        "definitions": derived.definitions.to_pylist(),
        "facts": derived.facts.to_pylist(),
        "reading": derived.reading.to_pylist(),
        "keys": derived.keys.to_pylist(),
        "prior": derived.prior.to_pylist(),
    }


def test_the_stage_reads_the_same_attributes_however_the_column_is_laid_out() -> None:
    whole = _spans().combine_chunks()
    assert whole.num_rows > 500 and whole.column("attributes").num_chunks == 1
    # chunks of 7 rows, each a slice starting one row into a larger array's buffers
    pieces = []
    for start in range(0, whole.num_rows, 7):
        rows = whole.slice(start, 7)
        padded = pa.concat_tables([whole.slice(0, 1), rows]).combine_chunks()
        pieces.append(padded.slice(1))
    chunked = pa.concat_tables(pieces)
    attributes = chunked.column("attributes")
    assert attributes.num_chunks == len(pieces) and all(c.offset == 1 for c in attributes.chunks)
    expected = _rows(STAGE.extract(Batch(whole, None, _NONE), ""))
    assert len(expected["calls"]) > 50 and len(expected["definitions"]) > 20
    assert _rows(STAGE.extract(Batch(chunked, None, _NONE), "")) == expected
