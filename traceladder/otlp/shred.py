"""Bulk OTLP/JSON → span rows inside DuckDB: the file-ingest path (`traceladder ingest`).

`json_format` (the receiver's JSON path) is exact but pure Python (~4.5k spans/s). Here the
request → row mapping runs in DuckDB's vectorised JSON functions, many requests per query (a query
costs ~20 ms of fixed overhead), with a Python post-pass (`otlp.shred_post`) only for rare shapes
(bench/ingest_throughput.py):

* `json_transform` parses each request once into a typed STRUCT. The recursive AnyValue is typed
  one level deep — every extra level doubles the struct and the SQL (2^depth: at depth 6 planning
  ran out of memory) — deeper values travel as a marker object holding their raw OTLP/JSON, which
  the post-pass converts (only the rows that have one).
* events, links and the resource travel as raw JSON and are converted in Python: nested lambdas
  for them cost as much as all span attributes, though few spans have any.
* Numeric fields are read as text and cast with TRY_CAST, so a mistyped value rejects its span
  with a reason (json_transform alone would silently turn it into NULL).
* Ids: hex (any case) → lowercase; base64 of exactly 16/8 bytes tolerated; same rejection reasons
  as the protobuf path.

Result: the same rows as `decode_traces` on the same JSON (tests compare every cell; JSON columns
after parsing). Duplicate attribute keys (invalid per the spec) stay duplicate JSON keys; parsed,
the last one wins, as in the protobuf path.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from traceladder.otlp.decoded import KIND_NAMES, STATUS_NAMES, DecodeError, Rejected
from traceladder.otlp.shred_post import DEEP_KEY, post_process, split

_DEEP_KEY_JSON = json.dumps(DEEP_KEY)[1:-1]  # as the marker's key is written inside the SQL's JSON text
_MARKER = '"' + _DEEP_KEY_JSON + '":'
_AV1 = {
    "stringValue": "VARCHAR",
    "boolValue": "VARCHAR",
    "intValue": "VARCHAR",  # "47" or 47
    "doubleValue": "VARCHAR",  # 1.5, "1.5", "NaN", "Infinity"
    "bytesValue": "VARCHAR",
    "arrayValue": "JSON",
    "kvlistValue": "JSON",
}


def _structure() -> str:
    span = {
        "traceId": "VARCHAR", "spanId": "VARCHAR", "parentSpanId": "VARCHAR", "traceState": "VARCHAR",
        "name": "VARCHAR", "kind": "VARCHAR", "startTimeUnixNano": "VARCHAR", "endTimeUnixNano": "VARCHAR",
        "attributes": [{"key": "VARCHAR", "value": _AV1}], "flags": "VARCHAR", "events": "JSON",
        "links": "JSON", "status": {"code": "VARCHAR", "message": "VARCHAR"},
    }  # fmt: skip
    scope = {"scope": {"name": "VARCHAR", "version": "VARCHAR"}, "spans": [span]}
    return json.dumps({"resourceSpans": [{"resource": {"attributes": "JSON"}, "scopeSpans": [scope]}]})


def _value_sql(v: str) -> str:
    """SQL: a one-level-typed AnyValue `v` → JSON text (a marker object for deeper values)."""
    d = f"TRY_CAST({v}.doubleValue AS DOUBLE)"
    arr = f"{v}.arrayValue"
    strs = f"json_extract_string({arr}, '$.values[*].stringValue')"
    return (
        f"(CASE WHEN {v}.stringValue IS NOT NULL THEN to_json({v}.stringValue)::VARCHAR"
        f" WHEN {v}.intValue IS NOT NULL THEN coalesce(TRY_CAST({v}.intValue AS BIGINT)::VARCHAR, 'null')"
        f" WHEN {v}.boolValue IS NOT NULL THEN CASE WHEN {v}.boolValue = 'true' THEN 'true' ELSE 'false' END"
        f" WHEN {d} IS NOT NULL THEN CASE WHEN isnan({d}) THEN '\"NaN\"'"
        f" WHEN isinf({d}) THEN CASE WHEN {d} > 0 THEN '\"Infinity\"' ELSE '\"-Infinity\"' END"
        f" ELSE to_json({d})::VARCHAR END"
        f" WHEN {v}.bytesValue IS NOT NULL"
        f" THEN coalesce(to_json(to_base64(otlp_b64({v}.bytesValue)))::VARCHAR, 'null')"
        f" WHEN {arr} IS NOT NULL THEN CASE"
        f" WHEN len(json_extract({arr}, '$.values[*]')) = len({strs}) THEN to_json({strs})::VARCHAR"
        f" ELSE '{{\"{_DEEP_KEY_JSON}\":{{\"arrayValue\":' || {arr}::VARCHAR || '}}}}' END"
        f" WHEN {v}.kvlistValue IS NOT NULL"
        f" THEN '{{\"{_DEEP_KEY_JSON}\":{{\"kvlistValue\":' || {v}.kvlistValue::VARCHAR || '}}}}'"
        f" ELSE 'null' END)"
    )


def _bad_value_sql(v: str) -> str:
    """SQL: true when a typed scalar of AnyValue `v` does not parse (json_format rejects those)."""
    return (
        f"({v}.intValue IS NOT NULL AND TRY_CAST({v}.intValue AS BIGINT) IS NULL)"
        f" OR ({v}.doubleValue IS NOT NULL AND TRY_CAST({v}.doubleValue AS DOUBLE) IS NULL)"
        f" OR ({v}.boolValue IS NOT NULL AND {v}.boolValue NOT IN ('true', 'false'))"
    )


def _u64(x: str) -> str:
    return f"TRY_CAST({x} AS UBIGINT)"


def _i64(x: str) -> str:  # UBIGINT → BIGINT with the same wrap-around as the Arrow path
    return (
        f"(CASE WHEN {x} IS NULL THEN 0 WHEN {x} < 9223372036854775808 THEN {x}::BIGINT"
        f" ELSE ({x}::HUGEINT - 18446744073709551616)::BIGINT END)"
    )


def _enum(x: str, names: Sequence[str], prefix: str) -> str:
    cases = " ".join(f"WHEN '{i}' THEN '{n}' WHEN '{prefix}{n}' THEN '{n}'" for i, n in enumerate(names))
    # unknown numbers and names → the zero value, as json_format does with ignore_unknown_fields
    return f"CASE coalesce({x}, '0') {cases} ELSE '{names[0]}' END"


def _sql(source: str) -> str:
    attrs = (
        "(CASE WHEN s.attributes IS NULL OR len(s.attributes) = 0 THEN '{}' ELSE concat('{', array_to_string("
        "list_transform(s.attributes, lambda a: concat(to_json(coalesce(a.key, ''))::VARCHAR, ':', "
        f"{_value_sql('a.value')})), ','), '}}') END)"
    )
    bad_attr = f"coalesce(len(list_filter(s.attributes, lambda a: {_bad_value_sql('a.value')})), 0) > 0"
    structure = _structure().replace("'", "''")
    kind = _enum("s.kind", KIND_NAMES, "SPAN_KIND_")
    status = _enum("s.status.code", STATUS_NAMES, "STATUS_CODE_")
    return f"""
WITH req AS (
  SELECT src_idx, json_transform(body, '{structure}') AS r FROM {source}
), rs AS (
  SELECT src_idx, unnest(r.resourceSpans) AS rs, generate_subscripts(r.resourceSpans, 1) - 1 AS ri FROM req
), ss AS (
  SELECT src_idx, ri, coalesce(rs.resource.attributes::VARCHAR, '[]') AS resource_raw,
         unnest(rs.scopeSpans) AS ss, generate_subscripts(rs.scopeSpans, 1) - 1 AS si
  FROM rs
), sp AS (
  SELECT src_idx, ri, si, resource_raw, nullif(ss.scope.name, '') AS scope_name,
         nullif(ss.scope.version, '') AS scope_version,
         unnest(ss.spans) AS s, generate_subscripts(ss.spans, 1) - 1 AS spi
  FROM ss
), ids AS (
  SELECT *, otlp_id(s.traceId, 24, 16) AS tid, otlp_id(s.spanId, 12, 8) AS sid,
         otlp_id(s.parentSpanId, 12, 8) AS pid, {_u64("s.startTimeUnixNano")} AS t0,
         {_u64("s.endTimeUnixNano")} AS t1, {kind} AS kind_name, {status} AS status_name
  FROM sp
), chk AS (
  SELECT *, CASE
    WHEN tid IS NULL THEN 'traceId is neither hex nor base64'
    WHEN sid IS NULL THEN 'spanId is neither hex nor base64'
    WHEN pid IS NULL THEN 'parentSpanId is neither hex nor base64'
    WHEN tid = '' THEN 'trace_id missing'
    WHEN length(tid) <> 32 THEN 'trace_id not 16 bytes (got ' || (length(tid) // 2) || ')'
    WHEN tid = '00000000000000000000000000000000' THEN 'trace_id is all zeros'
    WHEN sid = '' THEN 'span_id missing'
    WHEN length(sid) <> 16 THEN 'span_id not 8 bytes (got ' || (length(sid) // 2) || ')'
    WHEN sid = '0000000000000000' THEN 'span_id is all zeros'
    WHEN pid <> '' AND length(pid) <> 16 THEN 'parent_span_id not 8 bytes (got ' || (length(pid) // 2) || ')'
    WHEN s.startTimeUnixNano IS NOT NULL AND t0 IS NULL THEN 'does not fit the OTLP schema: startTimeUnixNano'
    WHEN s.endTimeUnixNano IS NOT NULL AND t1 IS NULL THEN 'does not fit the OTLP schema: endTimeUnixNano'
    WHEN s.flags IS NOT NULL AND TRY_CAST(s.flags AS UBIGINT) IS NULL
      THEN 'does not fit the OTLP schema: flags'
    WHEN {bad_attr} THEN 'does not fit the OTLP schema: an attribute value'
  END AS reason
  FROM ids
), main AS (
SELECT
  coalesce(tid, '') AS trace_id, coalesce(sid, '') AS span_id, nullif(pid, '') AS parent_span_id,
  coalesce(s.name, '') AS name, kind_name AS kind,
  {_i64("t0")} AS start_ns, {_i64("t1")} AS end_ns, status_name AS status_code,
  nullif(s.status.message, '') AS status_message,
  CASE WHEN reason IS NULL THEN {attrs} END AS attributes,
  CASE WHEN reason IS NULL AND s.events IS NOT NULL AND s.events::VARCHAR <> '[]'
       THEN s.events::VARCHAR END AS events,
  CASE WHEN reason IS NULL AND s.links IS NOT NULL AND s.links::VARCHAR <> '[]'
       THEN s.links::VARCHAR END AS links,
  -- the resource is converted in Python once per ResourceSpans: only the first span of each
  -- scope carries it, the post-pass fills it forward (row order is preserved)
  CASE WHEN spi = 0 THEN resource_raw END AS resource, scope_name, scope_version,
  nullif(s.traceState, '') AS trace_state,
  -- absent flags are 0, protobuf's default (a sender may omit a zero field in OTLP/JSON)
  coalesce((TRY_CAST(s.flags AS UBIGINT) % 4294967296)::BIGINT, 0) AS flags,
  reason, ri, si, spi, src_idx
FROM chk
)
SELECT *, coalesce(contains(attributes, '{_MARKER}'), false) AS deep FROM main
"""


def prepare(con: duckdb.DuckDBPyConnection) -> None:
    """Register the macros the shredder needs (idempotent)."""
    # id text → lowercase hex; '' when missing; NULL when neither hex nor base64 of n bytes
    con.execute(
        """
        CREATE OR REPLACE TEMP MACRO otlp_id(x, b64len, nbytes) AS CASE
          WHEN x IS NULL OR x = '' THEN ''
          WHEN regexp_full_match(x, '([0-9a-fA-F]{2})*') THEN lower(x)
          WHEN length(x) = b64len AND octet_length(try(from_base64(translate(x, '-_', '+/')))) = nbytes
            THEN lower(hex(from_base64(translate(x, '-_', '+/'))))
          ELSE NULL END
        """
    )
    con.execute(
        """
        CREATE OR REPLACE TEMP MACRO otlp_b64(x) AS try(from_base64(
          rpad(translate(x, '-_', '+/'), CAST(((length(x) + 3) // 4) * 4 AS INTEGER), '=')))
        """
    )


def shred_traces(
    con: duckdb.DuckDBPyConnection, bodies: Sequence[bytes]
) -> tuple[pa.Table, list[tuple[int, Rejected]]]:
    """OTLP/JSON `ExportTraceServiceRequest` bodies → (usable span rows, [(body index, rejected)]),
    all in one query. Raises DecodeError when any body is not valid JSON or UTF-8 (the caller then
    decodes body by body on the exact path to say which)."""
    prepare(con)
    try:
        text = pa.array(bodies, pa.binary()).cast(pa.string())
    except pa.ArrowInvalid as exc:
        raise DecodeError(f"not UTF-8: {exc}") from None
    con.register("otlp_bodies", pa.table({"src_idx": pa.array(range(len(bodies)), pa.int64()), "body": text}))
    try:
        t = con.sql(_sql("otlp_bodies")).to_arrow_table()
    except duckdb.Error as exc:
        raise DecodeError(f"invalid OTLP/JSON: {str(exc).splitlines()[0]}") from None
    finally:
        con.unregister("otlp_bodies")
    batch = split(post_process(t))
    if not batch.rejected:
        return batch.table, []
    sources = t.filter(pc.is_valid(t.column("reason"))).column("src_idx").to_pylist()
    return batch.table, list(zip(sources, batch.rejected, strict=True))
