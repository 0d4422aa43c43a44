"""Tool calls and tool definitions of the traces that changed, derived from everything stored.

Reads each affected trace's spans and log records in two set-based queries, runs the pure
extraction (`traceladder.conventions.extract_trace`) per trace, and replaces the trace's rows in
`tool_calls` and `tool_definitions` with one Arrow insert each. Runs inside the writer's
transaction, so readers never see a trace's spans without its calls.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import groupby
from typing import Any

import duckdb
import orjson
import pyarrow as pa

from traceladder.conventions import LogView, SpanView, TraceExtraction, extract_trace
from traceladder.storage.trace_index import index_traces

_SPANS = """
SELECT trace_id, span_id, parent_span_id, name, kind, start_ns, end_ns, status_code, status_message,
       attributes, events, scope_name
FROM spans SEMI JOIN affected_traces USING (trace_id) ORDER BY trace_id
"""
_LOGS = """
SELECT trace_id, record_id, span_id, time_ns, event_name, body, attributes, scope_name
FROM log_records SEMI JOIN affected_traces USING (trace_id) ORDER BY trace_id
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
    definitions = [
        (trace_id, d.name, d.description, d.parameters, d.convention, d.span_id, d.offered)
        for trace_id, x in extracted.items()
        for d in x.definitions
    ]

    def table(rows: list[tuple[Any, ...]], schema: pa.Schema) -> pa.Table:
        columns = zip(*rows, strict=True) if rows else ([] for _ in schema.names)
        return pa.table(dict(zip(schema.names, map(list, columns), strict=True)), schema=schema)

    return table(calls, _CALL_SCHEMA), table(definitions, _DEFINITION_SCHEMA)


def derive_traces(conn: duckdb.DuckDBPyConnection, trace_ids: pa.Array) -> int:
    """Replace the tool calls and definitions of `trace_ids`; returns how many traces were derived."""
    if len(trace_ids) == 0:
        return 0
    conn.register("affected_traces", pa.table({"trace_id": trace_ids}))
    try:
        spans, logs = _span_views(conn), _log_views(conn)
        extracted = {t: extract_trace(spans.get(t, []), logs.get(t, [])) for t in spans.keys() | logs.keys()}
        calls, definitions = _tables(extracted)
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
    return len(extracted)
