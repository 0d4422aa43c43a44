"""The set-based fold: tool calls of many traces at once, in SQL, where the SQL is exact.

The conventions may give their extraction as SQL (`Convention.set_extraction`, composed by
`registry.set_fold`); the Python extraction (`extract_trace`) stays the reference. A trace is
*settled* here — its rows come from SQL — only when all of these hold, and goes to the Python
extraction otherwise (docs/conventions.md, "The set-based fold"):

1. it has no log records (the event form is read in Python);
2. every span reads the same in SQL as in Python: its attributes are a JSON object without
   repeated keys (Python keeps the last, SQL paths the first) and without surrogate escapes
   (Python's reader refuses them), its events a list;
3. no convention without SQL may read any of its spans (`Convention.untouched_sql`);
4. no convention's SQL calls it unsettled (`SetExtraction.unsettled`).

Definitions of settled traces are read by the Python reference, from only the attributes they
come from (the tool lists, tool spans' names and descriptions): identical lists repeat on every
request and are parsed once, so this costs little, and no second implementation can drift.

Runs inside the writer's transaction on the registered `affected_traces`.
"""

from __future__ import annotations

from itertools import groupby
from typing import Any, NamedTuple

import duckdb
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from traceladder.conventions import registry
from traceladder.conventions.base import TOOL
from traceladder.conventions.definitions import choose, request_lists, tool_span_list
from traceladder.conventions.merge import structured_arguments
from traceladder.conventions.otel_genai import TOOL_DEFINITIONS
from traceladder.conventions.sightings import DefinitionEntry
from traceladder.conventions.views import SpanView, ToolDefinition
from traceladder.instrumentation import semconv as sc

# One pass over the stored spans: each span's attributes parsed a few times here (its keys, its
# role, the attributes the SQL reads), never again — the extraction's queries read a narrow copy.
# One pass over the stored spans: each span's attributes parsed here (its keys, its role, the
# attributes the SQL reads, all of them in one extraction), never again.
_SPANS = r"""
CREATE OR REPLACE TEMP TABLE fold_spans AS
SELECT trace_id, span_id, parent_span_id, start_ns, end_ns, status_code, events, scope_name, role,
       odd OR {touched} AS unreadable, {columns}
FROM (
  SELECT trace_id, span_id, parent_span_id, coalesce(start_ns, 0) AS start_ns, coalesce(end_ns, 0) AS end_ns,
         coalesce(status_code, 'UNSET') AS status_code, events, scope_name, keys, {role} AS role,
         json_extract(attributes, {paths}) AS picked,
         -- spans the SQL cannot read as Python does (rule 2 above)
         NOT starts_with(attributes, '{{') OR NOT starts_with(events, '[')
         OR len(keys) <> len(list_distinct(keys))
         OR contains(attributes, '\ud') OR contains(attributes, '\uD') AS odd
  FROM (SELECT trace_id, span_id, parent_span_id, start_ns, end_ns, status_code, scope_name, operation, name,
               attributes::VARCHAR AS attributes, coalesce(events::VARCHAR, '[]') AS events,
               json_keys(attributes) AS keys
        FROM spans WHERE trace_id IN (SELECT trace_id FROM affected_traces))
)
"""
_DEFINITION_KEYS = (sc.TOOL_NAME, sc.TOOL_DESCRIPTION)


def _materialise(conn: duckdb.DuckDBPyConnection, fold: registry.SetFold) -> None:
    keys = sorted({*(k for x in fold.extractions for k in x.keys), TOOL_DEFINITIONS, *_DEFINITION_KEYS})
    paths = "[" + ", ".join("'$.\"" + k + "\"'" for k in keys) + "]"
    columns = ", ".join(f'picked[{i}] AS "{k}"' for i, k in enumerate(keys, 1))
    conn.execute(_SPANS.format(role=registry.role_sql(), touched=fold.touched, paths=paths, columns=columns))


class Settled(NamedTuple):
    trace_ids: list[str]
    calls: pa.Table | None  # tool_calls rows of the settled traces (derive's call schema)
    definitions: dict[str, list[ToolDefinition]]


def settle(conn: duckdb.DuckDBPyConnection) -> Settled:
    """The traces of `affected_traces` the SQL settles, with their calls and definitions."""
    fold = registry.set_fold()
    if fold is None:
        return Settled([], None, {})
    _materialise(conn, fold)
    try:
        found = [conn.sql(x.sql).to_arrow_table() for x in fold.extractions]
        unsettled = [t.filter(t.column("unsettled")).column("trace_id") for t in found]
        rejected = (
            conn.sql(
                "SELECT trace_id FROM log_records WHERE trace_id IN (SELECT trace_id FROM affected_traces) "
                "UNION SELECT trace_id FROM fold_spans WHERE unreadable"
            )
            .to_arrow_table()
            .column(0)
        )
        affected = conn.sql("SELECT trace_id FROM affected_traces").to_arrow_table().column(0)
        out = pa.chunked_array([c for col in (rejected, *unsettled) for c in col.chunks], pa.string())
        settled = affected.filter(pc.invert(pc.is_in(affected, out)))
        if len(settled) == 0:
            return Settled([], None, {})
        keep = pa.array(settled.to_pylist(), pa.string())
        exact = [
            pc.and_(pc.invert(t.column("unsettled")), pc.is_in(t.column("trace_id"), keep)) for t in found
        ]
        calls = pa.concat_tables([_arguments(t.filter(rows)) for t, rows in zip(found, exact, strict=True)])
        conn.register("settled_traces", pa.table({"trace_id": keep}))
        try:
            conn.execute("DELETE FROM fold_spans WHERE trace_id NOT IN (SELECT trace_id FROM settled_traces)")
        finally:
            conn.unregister("settled_traces")
        return Settled(keep.to_pylist(), calls, _definitions(conn))
    finally:
        conn.execute("DROP TABLE IF EXISTS fold_spans")


def _arguments(calls: pa.Table) -> pa.Table:
    """Argument text the SQL handed back (structured arguments whose text it cannot write as
    Python does), decided by the Python's own rule (`merge._arguments`): the tool span's text
    when it holds the same arguments, else the structure serialised by `args_text`."""
    structured = calls.column("arguments_structured")
    if structured.null_count < len(structured):
        raw = calls.column("arguments_raw").to_pylist()
        executed = calls.column("execution_arguments").to_pylist()
        for i, text in enumerate(structured.to_pylist()):
            if text is not None:
                raw[i] = structured_arguments(orjson.loads(text), executed[i])
        calls = calls.set_column(
            calls.schema.get_field_index("arguments_raw"), "arguments_raw", pa.array(raw, pa.string())
        )
    return calls.drop_columns(["arguments_structured", "execution_arguments", "unsettled"])


def _definitions(conn: duckdb.DuckDBPyConnection) -> dict[str, list[ToolDefinition]]:
    """The Python reference's definitions, from narrow views holding only what they are read
    from (JSON fragments parsed by the same reader the whole attributes would be)."""
    keys = (TOOL_DEFINITIONS, *_DEFINITION_KEYS)
    fragments = ", ".join(f'"{k}"::VARCHAR' for k in keys)
    name, description = (f'"{k}"' for k in _DEFINITION_KEYS)
    # Only rows that can contribute: every request repeats its tool list (read once: the earliest
    # of each identical list), and of a tool's own descriptions the earliest wins.
    rows = conn.execute(
        f"""
        SELECT trace_id, span_id, start_ns, scope_name, false AS tool, {fragments} FROM fold_spans
        WHERE "{TOOL_DEFINITIONS}" IS NOT NULL
        QUALIFY row_number() OVER (PARTITION BY trace_id, "{TOOL_DEFINITIONS}" ORDER BY start_ns, span_id) = 1
        UNION ALL
        SELECT trace_id, span_id, start_ns, scope_name, true AS tool, NULL, {name}::VARCHAR,
               {description}::VARCHAR
        FROM fold_spans
        WHERE role = '{TOOL}' AND json_type({name}) = 'VARCHAR' AND json_type({description}) = 'VARCHAR'
        QUALIFY row_number() OVER (PARTITION BY trace_id, {name} ORDER BY start_ns, span_id) = 1
        ORDER BY trace_id
        """
    ).fetchall()
    hooks = registry.hooks()
    out: dict[str, list[ToolDefinition]] = {}
    for trace_id, found in groupby(rows, key=lambda r: r[0]):
        entries: list[DefinitionEntry] = []
        for _, span_id, start, scope, tool, *values in found:
            attrs: dict[str, Any] = {
                k: orjson.loads(v) for k, v in zip(keys, values, strict=True) if v is not None
            }
            span = SpanView(span_id, None, "", "", start, 0, "UNSET", None, attrs, [], scope)
            lists = (
                [tool_span_list(hooks.tool_definition, span)]
                if tool
                else request_lists(span, hooks.request_definitions)
            )
            entries.extend((tools.tier, start, span_id, i, span_id, tools) for i, tools in enumerate(lists))
        out[trace_id] = choose(entries)
    return out
