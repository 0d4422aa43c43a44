"""Tool calls and tool definitions of the traces that changed, derived from everything stored.

First the set-based fold (`storage.set_fold`) settles, in SQL, every trace whose shape the
conventions' SQL covers exactly; the rest are read in two set-based queries (spans, log records)
and run through the pure extraction (`traceladder.conventions.extract_trace`), the reference.
Each trace's rows in `tool_calls` and `tool_definitions` are replaced with one Arrow insert each.
Runs inside the writer's transaction, so readers never see a trace's spans without its calls.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import groupby
from typing import Any

import duckdb
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from traceladder.conventions import LogView, SpanView, ToolDefinition, TraceExtraction, extract_trace
from traceladder.storage.set_fold import settle
from traceladder.storage.trace_index import index_traces

_SPANS = """
SELECT trace_id, span_id, parent_span_id, name, kind, start_ns, end_ns, status_code, status_message,
       attributes, events, scope_name
FROM spans SEMI JOIN python_traces USING (trace_id) ORDER BY trace_id
"""
_LOGS = """
SELECT trace_id, record_id, span_id, time_ns, event_name, body, attributes, scope_name
FROM log_records SEMI JOIN python_traces USING (trace_id) ORDER BY trace_id
"""

_CALL_SCHEMA = pa.schema(
    [
        ("trace_id", pa.string()),
        ("ordinal", pa.int32()),
        ("tool_name", pa.string()),
        ("call_id", pa.string()),
        ("arguments_raw", pa.string()),
        ("result", pa.string()),
        ("status", pa.string()),
        ("error_type", pa.string()),
        ("convention", pa.string()),
        ("origin", pa.string()),
        ("span_id", pa.string()),
        ("response_span_id", pa.string()),
        ("record_id", pa.string()),
        ("turn", pa.int32()),
        ("call_index", pa.int32()),
        ("start_ns", pa.int64()),
        ("end_ns", pa.int64()),
    ]
)
_DEFINITION_SCHEMA = pa.schema(
    [
        ("trace_id", pa.string()),
        ("name", pa.string()),
        ("description", pa.string()),
        ("parameters", pa.string()),
        ("convention", pa.string()),
        ("span_id", pa.string()),
        ("offered", pa.bool_()),
    ]
)


def _json(text: str | None, default: Any) -> Any:
    if text is None:
        return default
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:  # the store only holds valid JSON; never fail a write on it
        return default


def _rows(conn: duckdb.DuckDBPyConnection, sql: str) -> Iterator[tuple[Any, ...]]:
    table = conn.sql(sql).to_arrow_table()
    return zip(*(table.column(i).to_pylist() for i in range(table.num_columns)), strict=True)


def _span_views(conn: duckdb.DuckDBPyConnection) -> dict[str, list[SpanView]]:
    out: dict[str, list[SpanView]] = {}
    for trace_id, rows in groupby(_rows(conn, _SPANS), key=lambda r: r[0]):
        out[trace_id] = [
            SpanView(
                span_id=r[1],
                parent_span_id=r[2],
                name=r[3],
                kind=r[4],
                start_ns=r[5] or 0,
                end_ns=r[6] or 0,
                status_code=r[7] or "UNSET",
                status_message=r[8],
                attributes=_json(r[9], {}),
                events=_json(r[10], []),
                scope_name=r[11],
            )  # fmt: skip
            for r in rows
        ]
    return out


def _log_views(conn: duckdb.DuckDBPyConnection) -> dict[str, list[LogView]]:
    out: dict[str, list[LogView]] = {}
    for trace_id, rows in groupby(_rows(conn, _LOGS), key=lambda r: r[0]):
        out[trace_id] = [
            LogView(
                record_id=r[1],
                span_id=r[2],
                time_ns=r[3] or 0,
                event_name=r[4],
                body=_json(r[5], None),
                attributes=_json(r[6], {}),
                scope_name=r[7],
            )  # fmt: skip
            for r in rows
        ]
    return out


def _table(rows: list[tuple[Any, ...]], schema: pa.Schema) -> pa.Table:
    columns = zip(*rows, strict=True) if rows else ([] for _ in schema.names)
    return pa.table(dict(zip(schema.names, map(list, columns), strict=True)), schema=schema)


def _definition_table(found: dict[str, list[ToolDefinition]]) -> pa.Table:
    rows = [
        (trace_id, d.name, d.description, d.parameters, d.convention, d.span_id, d.offered)
        for trace_id, definitions in found.items()
        for d in definitions
    ]
    return _table(rows, _DEFINITION_SCHEMA)


def _tables(extracted: dict[str, TraceExtraction]) -> tuple[pa.Table, pa.Table]:
    calls = [
        (
            trace_id,
            c.ordinal,
            c.tool_name,
            c.call_id,
            c.arguments_raw,
            c.result,
            c.status,
            c.error_type,
            c.convention,
            c.origin,
            c.span_id,
            c.response_span_id,
            c.record_id,
            c.turn,
            c.call_index,
            c.start_ns,
            c.end_ns,
        )  # fmt: skip
        for trace_id, x in extracted.items()
        for c in x.calls
    ]
    return _table(calls, _CALL_SCHEMA), _definition_table({t: x.definitions for t, x in extracted.items()})


# The set-based fold pays its fixed cost (a temporary table of the traces' spans, one query per
# convention, the checks that route a trace back to Python) only on large writes. Measured per
# trace on the OTLP workload (bench/extract_throughput.py's shapes, 20k spans): the Python
# extraction costs less up to ~500 traces a write and the SQL ~15% less from ~1,000; a suite
# run writes one to a few traces at a time, `serve` a segment of hundreds to thousands.
SET_FOLD_MIN_TRACES = 1_000


def derive_traces(conn: duckdb.DuckDBPyConnection, trace_ids: pa.Array, set_based: bool | None = None) -> int:
    """Replace the tool calls and definitions of `trace_ids`; returns how many traces were derived.
    `set_based`: None, the set-based fold for writes of `SET_FOLD_MIN_TRACES` or more (it gives
    the Python rows either way: tests/conventions/test_set_fold.py); True, the set-based fold
    whatever the size (where its SQL is exact); False, the Python extraction (the reference)."""
    if len(trace_ids) == 0:
        return 0
    if set_based is None:
        set_based = len(trace_ids) >= SET_FOLD_MIN_TRACES
    conn.register("affected_traces", pa.table({"trace_id": trace_ids}))
    try:
        settled = settle(conn) if set_based else None
        rest = trace_ids
        if settled is not None and settled.trace_ids:
            rest = pc.filter(
                trace_ids, pc.invert(pc.is_in(trace_ids, pa.array(settled.trace_ids, pa.string())))
            )
        conn.register("python_traces", pa.table({"trace_id": rest}))
        try:
            spans, logs = _span_views(conn), _log_views(conn)
        finally:
            conn.unregister("python_traces")
        extracted = {t: extract_trace(spans.get(t, []), logs.get(t, [])) for t in spans.keys() | logs.keys()}
        calls, definitions = _tables(extracted)
        if settled is not None and settled.calls is not None:
            calls = pa.concat_tables([calls, settled.calls.cast(_CALL_SCHEMA)])
            definitions = pa.concat_tables([definitions, _definition_table(settled.definitions)])
        conn.execute("DELETE FROM tool_calls WHERE trace_id IN (SELECT trace_id FROM affected_traces)")
        conn.execute("DELETE FROM tool_definitions WHERE trace_id IN (SELECT trace_id FROM affected_traces)")
        conn.register("derived_calls", calls)
        conn.register("derived_definitions", definitions)
        conn.execute(
            f"INSERT INTO tool_calls ({', '.join(_CALL_SCHEMA.names)}, arguments) "
            f"SELECT *, CASE WHEN json_type(try_cast(arguments_raw AS JSON)) = 'OBJECT' "
            "THEN try_cast(arguments_raw AS JSON) END FROM derived_calls"
        )
        conn.execute(
            f"INSERT INTO tool_definitions ({', '.join(_DEFINITION_SCHEMA.names)}) "
            "SELECT * FROM derived_definitions"
        )
        conn.unregister("derived_calls")
        conn.unregister("derived_definitions")
        index_traces(conn)
    finally:
        conn.unregister("affected_traces")
    return len(extracted) + (len(settled.trace_ids) if settled is not None else 0)
