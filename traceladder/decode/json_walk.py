"""OTLP/JSON trace requests → span rows by one walk over orjson's dicts: the fast half of the one
OTLP/JSON decoder (`decode.bodies.decode_traces`, for `serve` and `ingest` alike).

The exact path (`otlp_json`: ids fixed, `json_format.ParseDict`, the protobuf row builder) is pure
Python at ~440 µs a span; this walk reads the same dicts straight into the same rows at ~50
(bench/ingest_throughput.py; docs/decisions.md 371). It reads only the plain shape every exporter
sends and is strict about it: a key it does not know, a value of another JSON type, an id that is
not hex of its length or all zeros, an enum it cannot name, a number out of range, `bytesValue`,
`null` — anything irregular raises `Irregular`, and the request is decoded by the exact path,
which accepts, rejects a span with its reason, or refuses the request exactly as before. So the
walk never decides what is valid: it only skips the slow path where the answer is plain, and
gives the exact path's rows there (tests compare every cell on every producer's requests).
"""

from __future__ import annotations

import re
from typing import Any

import pyarrow as pa

from traceladder.decode.decoded import KIND_NAMES, STATUS_NAMES, TRACE_SCHEMA, DecodedBatch, ParsedSpan
from traceladder.decode.protobuf import _enum_names, _u64_to_i64
from traceladder.decode.values import dumps, finite, json_column


class Irregular(Exception):
    """The request is not of the plain shape the walk reads; the exact path decodes it."""


_HEX32 = re.compile(r"[0-9a-fA-F]{32}")
_HEX16 = re.compile(r"[0-9a-fA-F]{16}")
_DIGITS = re.compile(r"[0-9]{1,20}")
_SIGNED = re.compile(r"-?[0-9]{1,19}")
_U64 = 1 << 64
_I64 = 1 << 63
# An enum as its number or its name (the type is checked first: 1.0 and True are not numbers here).
_KINDS: dict[int | str, int] = {i: i for i in range(len(KIND_NAMES))}
_KINDS |= {f"SPAN_KIND_{n}": i for i, n in enumerate(KIND_NAMES)}
_CODES: dict[int | str, int] = {i: i for i in range(len(STATUS_NAMES))}
_CODES |= {f"STATUS_CODE_{n}": i for i, n in enumerate(STATUS_NAMES)}
_DOUBLES = {"NaN", "Infinity", "-Infinity"}

_REQUEST = frozenset({"resourceSpans"})
_RESOURCE_SPANS = frozenset({"resource", "scopeSpans", "schemaUrl"})
_RESOURCE = frozenset({"attributes", "droppedAttributesCount"})
_SCOPE_SPANS = frozenset({"scope", "spans", "schemaUrl"})
_SCOPE = frozenset({"name", "version", "attributes", "droppedAttributesCount"})
_SPAN = frozenset({
    "traceId", "spanId", "parentSpanId", "traceState", "name", "kind", "startTimeUnixNano",
    "endTimeUnixNano", "attributes", "droppedAttributesCount", "events", "droppedEventsCount",
    "links", "droppedLinksCount", "status", "flags",
})  # fmt: skip
_STATUS = frozenset({"code", "message"})
_EVENT = frozenset({"timeUnixNano", "name", "attributes", "droppedAttributesCount"})
_LINK = frozenset({"traceId", "spanId", "traceState", "attributes", "droppedAttributesCount", "flags"})
_KEY_VALUE = frozenset({"key", "value"})
_VALUES = frozenset({"values"})
MAX_DEPTH = 16


def _object(value: Any, known: frozenset[str]) -> dict[str, Any]:
    if type(value) is not dict or not known.issuperset(value):
        raise Irregular
    return value


def _list(value: Any) -> list[Any]:
    if type(value) is not list:
        raise Irregular
    return value


def _text(value: Any) -> str:
    if type(value) is not str:
        raise Irregular
    return value


def _u64(value: Any) -> int:
    if type(value) is str and _DIGITS.fullmatch(value):
        value = int(value)
    if type(value) is not int or not 0 <= value < _U64:
        raise Irregular
    return value


def _count(value: Any) -> None:
    if type(value) is not int or not 0 <= value < 1 << 32:
        raise Irregular


def _id(value: Any, pattern: re.Pattern[str], zero: str) -> str:
    if type(value) is not str or not pattern.fullmatch(value):
        raise Irregular
    value = value.lower()
    if value == zero:
        raise Irregular
    return value


def _value(v: Any, depth: int) -> Any:
    """An AnyValue object → the plain value the exact path gives (`values.any_value`). `depth`:
    the arrays and lists it sits in — `json_format` refuses messages nested past 100 levels, so a
    value nested deeper than `MAX_DEPTH` (far below that) is left to it."""
    if type(v) is not dict or len(v) > 1:
        raise Irregular
    if not v:
        return None
    ((kind, x),) = v.items()
    if kind == "stringValue":
        return _text(x)
    if kind == "boolValue":
        if type(x) is not bool:
            raise Irregular
        return x
    if kind == "intValue":
        if type(x) is str and _SIGNED.fullmatch(x):
            x = int(x)
        if type(x) is not int or not -_I64 <= x < _I64:
            raise Irregular
        return x
    if kind == "doubleValue":
        if type(x) is float or type(x) is int:
            return finite(float(x))
        if x in _DOUBLES:
            return x
        raise Irregular
    if kind == "arrayValue":
        if depth >= MAX_DEPTH:
            raise Irregular
        return [_value(e, depth + 1) for e in _list(_object(x, _VALUES).get("values", []))]
    if kind == "kvlistValue":
        if depth >= MAX_DEPTH:
            raise Irregular
        return _attributes(_object(x, _VALUES).get("values", []), depth + 1)
    raise Irregular  # bytesValue (base64 rules) and anything else: the exact path


def _attributes(kvs: Any, depth: int = 0) -> dict[str, Any]:
    """A KeyValue list → dict, the last duplicate key winning (as the exact path)."""
    out: dict[str, Any] = {}
    for kv in _list(kvs):
        if type(kv) is not dict:
            raise Irregular
        value = kv.get("value")
        if type(value) is dict and len(value) == 1 and type(s := value.get("stringValue")) is str:
            if len(kv) != 2 or type(key := kv.get("key")) is not str:  # the common case, checked cheaply
                _object(kv, _KEY_VALUE)
                key = _text(kv.get("key", ""))
            out[key] = s
            continue
        _object(kv, _KEY_VALUE)
        out[_text(kv.get("key", ""))] = None if "value" not in kv else _value(value, depth)
    return out


def _check_counts(obj: dict[str, Any], *names: str) -> None:
    for name in names:
        if name in obj:
            _count(obj[name])


def trace_rows(request: dict[str, Any]) -> DecodedBatch:
    """The rows of an OTLP/JSON trace request already parsed to dicts; `Irregular` when it is not
    plain (module docstring)."""
    cols: list[list[Any]] = [[] for _ in TRACE_SCHEMA.names]
    (tids, sids, parents, names, kinds, starts, ends, codes, messages, attrs_col, events_col, links_col,
     resources, scope_names, scope_versions, states, flags) = cols  # fmt: skip
    parsed: list[ParsedSpan] = []  # each span's attributes and events, kept for the extraction stage
    empty = b"[]"
    for rs in _list(_object(request, _REQUEST).get("resourceSpans", [])):
        rs = _object(rs, _RESOURCE_SPANS)
        if "schemaUrl" in rs:
            _text(rs["schemaUrl"])
        res = _object(rs.get("resource", {}), _RESOURCE)
        _check_counts(res, "droppedAttributesCount")
        resource = dumps(_attributes(res.get("attributes", [])))
        for ss in _list(rs.get("scopeSpans", [])):
            ss = _object(ss, _SCOPE_SPANS)
            if "schemaUrl" in ss:
                _text(ss["schemaUrl"])
            scope = _object(ss.get("scope", {}), _SCOPE)
            _attributes(scope.get("attributes", []))
            _check_counts(scope, "droppedAttributesCount")
            scope_name = _text(scope.get("name", "")) or None
            scope_version = _text(scope.get("version", "")) or None
            kept = 0
            for sp in _list(ss.get("spans", [])):
                sp = _object(sp, _SPAN)
                tids.append(_id(sp.get("traceId"), _HEX32, "0" * 32))
                sids.append(_id(sp.get("spanId"), _HEX16, "0" * 16))
                parent = sp.get("parentSpanId", "")
                parents.append(None if parent == "" else _id(parent, _HEX16, ""))
                names.append(_text(sp.get("name", "")))
                kind = sp.get("kind", 0)
                if type(kind) not in (int, str) or kind not in _KINDS:
                    raise Irregular
                kinds.append(_KINDS[kind])
                starts.append(_u64(sp.get("startTimeUnixNano", 0)))
                ends.append(_u64(sp.get("endTimeUnixNano", 0)))
                status = _object(sp.get("status", {}), _STATUS)
                code = status.get("code", 0)
                if type(code) not in (int, str) or code not in _CODES:
                    raise Irregular
                codes.append(_CODES[code])
                messages.append(_text(status.get("message", "")) or None)
                attrs = _attributes(sp.get("attributes", []))
                attrs_col.append(dumps(attrs))
                evs = [_event(e) for e in _list(sp.get("events", []))]
                events_col.append(dumps(evs) if evs else empty)
                parsed.append((attrs, evs))
                lks = _list(sp.get("links", []))
                links_col.append(dumps([_link(lk) for lk in lks]) if lks else empty)
                states.append(_text(sp.get("traceState", "")) or None)
                flag = sp.get("flags", 0)
                _count(flag)
                flags.append(flag)
                _check_counts(sp, "droppedAttributesCount", "droppedEventsCount", "droppedLinksCount")
                kept += 1
            resources.extend([resource] * kept)
            scope_names.extend([scope_name] * kept)
            scope_versions.extend([scope_version] * kept)
    s = pa.string()
    arrays = [
        pa.array(tids, s), pa.array(sids, s), pa.array(parents, s), pa.array(names, s),
        _enum_names(kinds, pa.array(KIND_NAMES, s)), _u64_to_i64(starts), _u64_to_i64(ends),
        _enum_names(codes, pa.array(STATUS_NAMES, s)), pa.array(messages, s),
        json_column(attrs_col), json_column(events_col), json_column(links_col), json_column(resources),
        pa.array(scope_names, s), pa.array(scope_versions, s), pa.array(states, s),
        pa.array(flags, pa.uint32()).cast(pa.int32(), safe=False),
    ]  # fmt: skip
    return DecodedBatch(pa.Table.from_arrays(arrays, schema=TRACE_SCHEMA), [], parsed)


def _event(e: Any) -> dict[str, Any]:
    e = _object(e, _EVENT)
    _check_counts(e, "droppedAttributesCount")
    return {
        "name": _text(e.get("name", "")),
        "time_ns": _u64(e.get("timeUnixNano", 0)),
        "attributes": _attributes(e.get("attributes", [])),
    }


def _link(lk: Any) -> dict[str, Any]:
    lk = _object(lk, _LINK)
    _check_counts(lk, "droppedAttributesCount", "flags")
    if "traceState" in lk:
        _text(lk["traceState"])
    return {
        "trace_id": _id(lk.get("traceId"), _HEX32, ""),
        "span_id": _id(lk.get("spanId"), _HEX16, ""),
        "attributes": _attributes(lk.get("attributes", [])),
    }
