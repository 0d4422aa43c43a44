"""The OpenTelemetry Collector `clickhouseexporter`'s `otel_traces` rows ⇄ our span rows.

What the exporter writes (its Go source, `exporter_traces.go` and pdata): `Timestamp` is the span
*start*; `Duration` is end − start in ns as UInt64 (an end before the start wraps around, so a
value ≥ 2^63 is no duration: such a span gets end = start); ids are lowercase hex, `''` when
absent; `SpanKind` is `Unspecified|Internal|Server|Client|Producer|Consumer` and `StatusCode`
`Unset|Ok|Error` (exporters before Aug 2024 wrote `SPAN_KIND_*` / `STATUS_CODE_*`: both are
read); every attribute value went through `pcommon.Value.AsString()` — ints as decimal, bools as
`true`/`false`, arrays and maps as JSON text, bytes as base64.

Reading: attribute values stay the strings the exporter wrote. The original types are gone (`"1"`
may have been an int or a string) and guessing would be wrong both ways; the conventions read
JSON text and structured values alike (`extract.conventions.attribute_values.loads`), and a tool
call's arguments are text in every convention anyway. Events (a Nested column) become span
events, which the GenAI conventions read for `gen_ai.choice` / message events.

Writing (`to_otel_traces`) is the exporter's mapping in Python — for tests, benchmarks and
backfilling a ClickHouse table from a store.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

import duckdb
import orjson
import pyarrow as pa

from traceladder.store.spans import SPAN_SCHEMA

# The 22 columns the exporter inserts, in its INSERT's order. Reading selects only these, so both
# the released DDL and its successors (extra ALIAS columns, other codecs and indexes) are read.
COLUMNS = (
    "Timestamp", "TraceId", "SpanId", "ParentSpanId", "TraceState", "SpanName", "SpanKind", "ServiceName",
    "ResourceAttributes", "ScopeName", "ScopeVersion", "SpanAttributes", "Duration", "StatusCode",
    "StatusMessage", "Events.Timestamp", "Events.Name", "Events.Attributes", "Links.TraceId", "Links.SpanId",
    "Links.TraceState", "Links.Attributes",
)  # fmt: skip

_STR_MAP = pa.map_(pa.string(), pa.string())
OTEL_TRACES_SCHEMA = pa.schema(
    [
        ("Timestamp", pa.timestamp("ns", tz="UTC")), ("TraceId", pa.string()), ("SpanId", pa.string()),
        ("ParentSpanId", pa.string()), ("TraceState", pa.string()), ("SpanName", pa.string()),
        ("SpanKind", pa.string()), ("ServiceName", pa.string()), ("ResourceAttributes", _STR_MAP),
        ("ScopeName", pa.string()), ("ScopeVersion", pa.string()), ("SpanAttributes", _STR_MAP),
        ("Duration", pa.uint64()), ("StatusCode", pa.string()), ("StatusMessage", pa.string()),
        ("Events.Timestamp", pa.list_(pa.timestamp("ns", tz="UTC"))), ("Events.Name", pa.list_(pa.string())),
        ("Events.Attributes", pa.list_(_STR_MAP)), ("Links.TraceId", pa.list_(pa.string())),
        ("Links.SpanId", pa.list_(pa.string())), ("Links.TraceState", pa.list_(pa.string())),
        ("Links.Attributes", pa.list_(_STR_MAP)),
    ]
)  # fmt: skip

# ClickHouse SELECT list: plain Arrow types on every server version (LowCardinality and
# DateTime64 cast away), aliased to the names the mapping below reads.
SELECT = """
    TraceId AS trace_id, SpanId AS span_id, ParentSpanId AS parent_span_id,
    CAST(TraceState AS String) AS trace_state, CAST(SpanName AS String) AS name,
    CAST(SpanKind AS String) AS kind, CAST(ResourceAttributes AS Map(String, String)) AS resource,
    CAST(ScopeName AS String) AS scope_name, CAST(ScopeVersion AS String) AS scope_version,
    CAST(SpanAttributes AS Map(String, String)) AS attributes,
    toUnixTimestamp64Nano(Timestamp) AS start_ns, toUInt64(Duration) AS duration_ns,
    CAST(StatusCode AS String) AS status_code, StatusMessage AS status_message,
    arrayMap(t -> toUnixTimestamp64Nano(t), `Events.Timestamp`) AS event_ns,
    CAST(`Events.Name` AS Array(String)) AS event_names,
    CAST(`Events.Attributes` AS Array(Map(String, String))) AS event_attributes,
    `Links.TraceId` AS link_trace_ids, `Links.SpanId` AS link_span_ids,
    CAST(`Links.Attributes` AS Array(Map(String, String))) AS link_attributes
"""


def _enum(column: str, prefix: str, names: tuple[str, ...]) -> str:
    value = f"regexp_replace(upper({column}), '^{prefix}', '')"
    listed = ", ".join(f"'{n}'" for n in names)
    return f"CASE WHEN {value} IN ({listed}) THEN {value} ELSE '{names[0]}' END"


_TO_SPANS = f"""
SELECT lower(trace_id) AS trace_id, lower(span_id) AS span_id,
       nullif(lower(parent_span_id), '') AS parent_span_id, name,
       {_enum("kind", "SPAN_KIND_", ("UNSPECIFIED", "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER"))}
           AS kind,
       start_ns::BIGINT AS start_ns,
       CASE WHEN duration_ns >= 9223372036854775808 THEN start_ns::BIGINT
            ELSE (start_ns::HUGEINT + duration_ns)::BIGINT END AS end_ns,
       {_enum("status_code", "STATUS_CODE_", ("UNSET", "OK", "ERROR"))} AS status_code,
       nullif(status_message, '') AS status_message,
       to_json(attributes)::VARCHAR AS attributes,
       to_json(list_transform(event_names, lambda n, i: {{'name': n, 'time_ns': event_ns[i],
           'attributes': event_attributes[i]}}))::VARCHAR AS events,
       to_json(list_transform(link_trace_ids, lambda t, i: {{'trace_id': lower(t),
           'span_id': lower(link_span_ids[i]), 'attributes': link_attributes[i]}}))::VARCHAR AS links,
       to_json(resource)::VARCHAR AS resource,
       nullif(scope_name, '') AS scope_name, nullif(scope_version, '') AS scope_version,
       nullif(trace_state, '') AS trace_state, 0 AS flags
FROM otel_rows
WHERE trace_id <> '' AND span_id <> ''
"""


def to_span_rows(rows: pa.Table, source: str = "clickhouse") -> pa.Table:
    """Rows selected with `SELECT` → SPAN_SCHEMA (vectorised in DuckDB; what a convention reads
    from them is the extraction stage's, when they are written)."""
    con = duckdb.connect()
    try:
        con.register("otel_rows", rows)
        mapped = con.sql(_TO_SPANS).to_arrow_table()
    finally:
        con.close()
    return mapped.append_column("source", pa.array([source] * mapped.num_rows, pa.string())).cast(SPAN_SCHEMA)


# -- writing: what the exporter would insert for our span rows -----------------------------------

_KINDS = {"UNSPECIFIED": "Unspecified", "INTERNAL": "Internal", "SERVER": "Server", "CLIENT": "Client",
          "PRODUCER": "Producer", "CONSUMER": "Consumer"}  # fmt: skip
_STATUSES = {"UNSET": "Unset", "OK": "Ok", "ERROR": "Error"}
_GO_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def _go_float(value: float) -> str:
    """pcommon's double formatting (ES6 style): plain digits in [1e-6, 1e21), else 'e' notation."""
    if not math.isfinite(value):
        return f"json: unsupported value: {value}"
    if value == 0 or 1e-6 <= abs(value) < 1e21:
        text = format(Decimal(repr(value)), "f")
        return text[:-2] if text.endswith(".0") else text
    mantissa, exponent = repr(value).split("e")
    return f"{mantissa}e{exponent[0]}{exponent[1:].lstrip('0') or '0'}"


def as_string(value: Any) -> str:
    """`pcommon.Value.AsString()` of a value decoded from our attribute JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_float(value)
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)  # Go: sorted keys
    return "".join(_GO_ESCAPES.get(ch, ch) for ch in text) if any(c in text for c in _GO_ESCAPES) else text


def _map(attributes: dict[str, Any]) -> list[tuple[str, str]]:
    return [(k, as_string(v)) for k, v in attributes.items()]


def to_otel_traces(spans: pa.Table) -> pa.Table:
    """SPAN_SCHEMA rows → the exporter's 22 columns (`OTEL_TRACES_SCHEMA`)."""
    cols: dict[str, list[Any]] = {name: [] for name in OTEL_TRACES_SCHEMA.names}
    for row in spans.select(list(SPAN_SCHEMA.names)).to_pylist():
        resource = orjson.loads(row["resource"] or "{}")
        events = orjson.loads(row["events"] or "[]")
        links = orjson.loads(row["links"] or "[]")
        start, end = row["start_ns"], row["end_ns"]
        values = (
            start, row["trace_id"], row["span_id"], row["parent_span_id"] or "", row["trace_state"] or "",
            row["name"], _KINDS.get(row["kind"], "Unspecified"), as_string(resource.get("service.name")),
            _map(resource), row["scope_name"] or "", row["scope_version"] or "",
            _map(orjson.loads(row["attributes"] or "{}")), (end - start) % 2**64,
            _STATUSES.get(row["status_code"], "Unset"), row["status_message"] or "",
            [e.get("time_ns", 0) for e in events], [e.get("name", "") for e in events],
            [_map(e.get("attributes") or {}) for e in events],
            [lk.get("trace_id", "") for lk in links], [lk.get("span_id", "") for lk in links],
            ["" for _ in links], [_map(lk.get("attributes") or {}) for lk in links],
        )  # fmt: skip
        for name, value in zip(OTEL_TRACES_SCHEMA.names, values, strict=True):
            cols[name].append(value)
    return pa.table(cols, schema=OTEL_TRACES_SCHEMA)
