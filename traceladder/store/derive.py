"""Writing the rows the extraction stage derived, as given (`store.derived.DerivedRows`).

The store never derives anything itself: the stage said which spans are tool spans, which calls
each trace made and which tools it was offered; here those rows replace the traces' old ones, each
stamped with the extraction that produced it (`extraction`, `conventions`), and the trace index
is rewritten. Runs inside the writer's transaction, so readers never see a trace's spans without
its calls.
"""

from __future__ import annotations

import contextlib

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from traceladder.store.conversation_groups import group_conversations
from traceladder.store.derived import (
    CALL_SCHEMA,
    CONVERSATION_KEY_SCHEMA,
    DEFINITION_SCHEMA,
    DERIVED_SPAN_COLUMNS,
    PRIOR_CALL_SCHEMA,
    READING_SCHEMA,
    DerivedRows,
)
from traceladder.store.trace_index import index_traces


def _unregister(conn: duckdb.DuckDBPyConnection, name: str) -> None:
    # Inside an aborted transaction DuckDB refuses to unregister; that refusal must not replace
    # the error that aborted it (a later register of the same name replaces the table anyway).
    with contextlib.suppress(duckdb.Error):
        conn.unregister(name)


def _only(table: pa.Table, trace_ids: pa.Array) -> pa.Table:
    return table.filter(pc.is_in(table.column("trace_id"), trace_ids))


def store_derived(
    conn: duckdb.DuckDBPyConnection, derived: DerivedRows, trace_ids: pa.Array, *, arrived: bool = True
) -> int:
    """Replace the tool calls, definitions, reading and trace-index rows of `trace_ids` (a subset of the
    traces `derived` covers) with `derived`'s; returns how many traces. `arrived`: the traces
    gained rows now (their `last_seen` moves); a rebuild keeps it."""
    if len(trace_ids) == 0:
        return 0
    calls, definitions, facts, reading = derived.calls, derived.definitions, derived.facts, derived.reading
    keys = CONVERSATION_KEY_SCHEMA.empty_table() if derived.keys is None else derived.keys
    prior = PRIOR_CALL_SCHEMA.empty_table() if derived.prior is None else derived.prior
    if len(trace_ids) != len(derived.trace_ids):
        calls, definitions, facts, reading, keys, prior = (
            _only(t, trace_ids) for t in (calls, definitions, facts, reading, keys, prior)
        )
    stamp = {"v": derived.stamp.version, "c": derived.stamp.conventions}
    conn.register("affected_traces", pa.table({"trace_id": trace_ids}))
    conn.register("derived_calls", calls.select(CALL_SCHEMA.names))
    conn.register("derived_definitions", definitions.select(DEFINITION_SCHEMA.names))
    conn.register("derived_facts", facts)
    conn.register("derived_reading", reading.select(READING_SCHEMA.names))
    conn.register("derived_keys", keys.select(CONVERSATION_KEY_SCHEMA.names))
    conn.register("derived_prior", prior.select(PRIOR_CALL_SCHEMA.names))
    try:
        conn.execute("DELETE FROM tool_calls WHERE trace_id IN (SELECT trace_id FROM affected_traces)")
        conn.execute("DELETE FROM tool_definitions WHERE trace_id IN (SELECT trace_id FROM affected_traces)")
        conn.execute("DELETE FROM trace_reading WHERE trace_id IN (SELECT trace_id FROM affected_traces)")
        conn.execute(
            f"INSERT INTO tool_calls ({', '.join(CALL_SCHEMA.names)}, arguments, extraction, conventions) "
            "SELECT *, CASE WHEN json_type(try_cast(arguments_raw AS JSON)) = 'OBJECT' "
            "THEN try_cast(arguments_raw AS JSON) END, $v, $c FROM derived_calls",
            stamp,
        )
        conn.execute(
            f"INSERT INTO tool_definitions ({', '.join(DEFINITION_SCHEMA.names)}, extraction, conventions) "
            "SELECT *, $v, $c FROM derived_definitions",
            stamp,
        )
        conn.execute(
            f"INSERT INTO trace_reading ({', '.join(READING_SCHEMA.names)}, extraction, conventions) "
            "SELECT *, $v, $c FROM derived_reading",
            stamp,
        )
        index_traces(conn, stamp=derived.stamp, arrived=arrived)
        for table, source, schema in (
            ("conversation_keys", "derived_keys", CONVERSATION_KEY_SCHEMA),
            ("prior_calls", "derived_prior", PRIOR_CALL_SCHEMA),
        ):
            conn.execute(f"DELETE FROM {table} WHERE trace_id IN (SELECT trace_id FROM affected_traces)")
            conn.execute(
                f"INSERT INTO {table} ({', '.join(schema.names)}, extraction, conventions) "
                f"SELECT *, $v, $c FROM {source}",
                stamp,
            )
        group_conversations(conn, derived.stamp)
    finally:
        for name in ("affected_traces", "derived_calls", "derived_definitions", "derived_facts",
                     "derived_reading", "derived_keys", "derived_prior"):  # fmt: skip
            _unregister(conn, name)
    return len(trace_ids)


def restore_span_columns(conn: duckdb.DuckDBPyConnection, spans: pa.Table) -> None:
    """Rewrite the derived columns of stored spans (`spans`: trace_id, span_id and
    `DERIVED_SPAN_COLUMNS`, as a rebuild derived them)."""
    conn.register("derived_spans", spans.select(["trace_id", "span_id", *DERIVED_SPAN_COLUMNS]))
    try:
        sets = ", ".join(f"{c} = d.{c}" for c in DERIVED_SPAN_COLUMNS)
        conn.execute(
            f"UPDATE spans SET {sets} FROM derived_spans d "
            "WHERE spans.trace_id = d.trace_id AND spans.span_id = d.span_id"
        )
    finally:
        _unregister(conn, "derived_spans")
