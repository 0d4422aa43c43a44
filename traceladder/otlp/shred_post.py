"""The Python half of the bulk OTLP/JSON decoder (`otlp.shred`): what its SQL cannot convert.

The shred query hands back, for the rare rows that need them, raw OTLP/JSON that this module
turns into the stored values (`_post_process`):

* attribute values nested deeper than the SQL types them (a marker object, `DEEP_KEY`, holding
  the raw AnyValue) → plain JSON values, as `values.any_value` gives them;
* events and links (raw JSON in the query: nested lambdas for them cost as much as every span
  attribute) → the stored lists, link ids as lowercase hex;
* the resource, once per ResourceSpans (only the first span of each scope carries it), filled
  forward to the spans after it.

`split` then separates usable rows from rejected ones. Nothing here reads a span by convention:
that is the extraction stage's (`traceladder.extraction`).
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from traceladder.otlp.decoded import TRACE_SCHEMA, DecodedBatch, Rejected
from traceladder.otlp.otlp_json import json_id
from traceladder.otlp.values import dumps, finite, loads

# The key of the marker object a too-deep AnyValue travels in from the SQL (a NUL-prefixed key
# no producer writes).
DEEP_KEY = "\x00traceladder.deep-anyvalue"


def _int(x: Any) -> int:
    try:
        return int(x)
    except (TypeError, ValueError):
        return 0


def _list(x: Any) -> list[Any]:
    return x if isinstance(x, list) else []


def json_any(v: Any) -> Any:
    """An OTLP/JSON AnyValue dict → plain value (mirrors `values.any_value` for messages)."""
    if not isinstance(v, dict):
        return None
    if (x := v.get("stringValue")) is not None:
        return x
    if (x := v.get("intValue")) is not None:
        return _int(x)
    if (x := v.get("boolValue")) is not None:
        return bool(x)
    if (x := v.get("doubleValue")) is not None:
        return finite(float(x))
    if (x := v.get("bytesValue")) is not None:
        s = str(x).replace("-", "+").replace("_", "/")
        return base64.b64encode(base64.b64decode(s + "=" * (-len(s) % 4))).decode("ascii")
    if (x := v.get("arrayValue")) is not None:
        return [json_any(e) for e in _list(x.get("values") if isinstance(x, dict) else None)]
    if (x := v.get("kvlistValue")) is not None:
        return json_attributes(x.get("values") if isinstance(x, dict) else None)
    return None


def json_attributes(kvs: Any) -> dict[str, Any]:
    return {str(kv.get("key") or ""): json_any(kv.get("value")) for kv in _list(kvs) if isinstance(kv, dict)}


def _hex_id(v: Any, nbytes: int) -> str:
    b64, err = json_id(v, nbytes)
    return "" if err or not b64 else base64.b64decode(b64).hex()


def _undeep(x: Any) -> Any:
    if isinstance(x, dict):
        if len(x) == 1 and DEEP_KEY in x:
            return json_any(x[DEEP_KEY])
        return {k: _undeep(v) for k, v in x.items()}
    return x


def _events(raw: Any) -> list[dict[str, Any]]:
    return [
        {"name": e.get("name") or "", "time_ns": _int(e.get("timeUnixNano") or 0),
         "attributes": json_attributes(e.get("attributes"))}
        for e in _list(raw) if isinstance(e, dict)
    ]  # fmt: skip


def _links(raw: Any) -> list[dict[str, Any]]:
    return [
        {"trace_id": _hex_id(lk.get("traceId"), 16), "span_id": _hex_id(lk.get("spanId"), 8),
         "attributes": json_attributes(lk.get("attributes"))}
        for lk in _list(raw) if isinstance(lk, dict)
    ]  # fmt: skip


def _convert(col: pa.ChunkedArray, fn: Callable[[Any], Any], only: pa.ChunkedArray | None) -> list[Any]:
    values = col.to_pylist()
    rows = range(len(values)) if only is None else pc.indices_nonzero(only).to_pylist()
    for i in rows:
        if values[i] is not None:
            values[i] = dumps(fn(loads(values[i]))).decode()
    return values


def post_process(t: pa.Table) -> pa.Table:
    def put(name: str, values: Any) -> None:
        nonlocal t
        t = t.set_column(t.schema.get_field_index(name), name, pa.array(values, pa.string()))

    deep = t.column("deep")
    if pc.any(deep).as_py():
        put("attributes", _convert(t.column("attributes"), _undeep, deep))
    for name, fn in (("events", _events), ("links", _links)):
        col = t.column(name)
        present = pc.is_valid(col)
        values = _convert(col, fn, present) if pc.any(present).as_py() else col.to_pylist()
        put(name, ["[]" if v is None else v for v in values])
    resources = t.column("resource").to_pylist()
    cache: dict[str, str] = {}
    last = "{}"
    for i, raw in enumerate(resources):
        if raw is not None:
            last = cache.get(raw) or cache.setdefault(raw, dumps(json_attributes(loads(raw))).decode())
        resources[i] = last
    put("resource", resources)
    return t


def split(t: pa.Table) -> DecodedBatch:
    reason = t.column("reason")
    if reason.null_count == len(reason):
        return DecodedBatch(t.select(TRACE_SCHEMA.names).cast(TRACE_SCHEMA), [])
    ok = pc.is_null(reason)
    good = t.filter(ok).select(TRACE_SCHEMA.names).cast(TRACE_SCHEMA)
    bad = t.filter(pc.invert(ok)).select(["ri", "si", "spi", "trace_id", "span_id", "name", "reason"])
    rejected = [
        Rejected(r["ri"], r["si"], r["spi"], r["trace_id"], r["span_id"], r["name"], r["reason"])
        for r in bad.to_pylist()
    ]
    return DecodedBatch(good, rejected)
