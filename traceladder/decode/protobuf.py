"""Parsed OTLP requests (the official `opentelemetry-proto` classes) → Arrow span and log rows.

Everything after `FromString` (upb, C, <1 µs per span) is one Python pass that touches each field
once; fixed mappings (enum names, uint64 → int64, fixed32 → int32) run vectorised in Arrow per
column, resource and scope are serialised once per ResourceSpans/ScopeSpans, and trace ids are hexed
once per batch. A span with unusable ids is rejected alone; its siblings are kept.
"""

from __future__ import annotations

import functools
import hashlib
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from google.protobuf.message import DecodeError as ProtobufError
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from traceladder.decode.decoded import (
    KIND_NAMES,
    LOG_SCHEMA,
    STATUS_NAMES,
    TRACE_SCHEMA,
    DecodedBatch,
    DecodeError,
    ParsedSpan,
    Rejected,
)
from traceladder.decode.values import any_value, attributes, dumps, json_column

# (resource, scope, item) index → a reason found before parsing (the JSON path's bad ids)
Overrides = dict[tuple[int, int, int], str]

# Built on first use, not at import: pyarrow's first `pa.array` of a list looks for pandas, which costs
# every CLI start ~0.15 s where pandas is installed (the dask extra brings it).
_KIND_ARR = functools.cache(lambda: pa.array(KIND_NAMES, pa.string()))
_STATUS_ARR = functools.cache(lambda: pa.array(STATUS_NAMES, pa.string()))
_Z16 = bytes(16)
_Z8 = bytes(8)


def parse_trace_request(body: bytes) -> ExportTraceServiceRequest:
    try:
        return ExportTraceServiceRequest.FromString(body)
    except ProtobufError as exc:
        raise DecodeError(f"invalid protobuf ExportTraceServiceRequest: {exc}") from None


def parse_log_request(body: bytes) -> ExportLogsServiceRequest:
    try:
        return ExportLogsServiceRequest.FromString(body)
    except ProtobufError as exc:
        raise DecodeError(f"invalid protobuf ExportLogsServiceRequest: {exc}") from None


def _span_reject_reason(tid: bytes, sid: bytes, pid: bytes) -> str:
    if not tid:
        return "trace_id missing"
    if len(tid) != 16:
        return f"trace_id not 16 bytes (got {len(tid)})"
    if tid == _Z16:
        return "trace_id is all zeros"
    if not sid:
        return "span_id missing"
    if len(sid) != 8:
        return f"span_id not 8 bytes (got {len(sid)})"
    if sid == _Z8:
        return "span_id is all zeros"
    return f"parent_span_id not 8 bytes (got {len(pid)})"


def _u64_to_i64(values: list[int]) -> pa.Array:
    # OTLP times are fixed64; the store wants int64. Values >= 2**63 (year > 2262) wrap.
    return pa.array(values, pa.uint64()).cast(pa.int64(), safe=False)


def _enum_names(values: list[int], names: pa.Array) -> pa.Array:
    idx = pa.array(values, pa.int64())
    bad = pc.or_(pc.less(idx, 0), pc.greater_equal(idx, len(names)))
    if pc.any(bad).as_py():  # proto3 enums are open: unknown numbers → UNSPECIFIED / UNSET
        idx = pc.if_else(bad, 0, idx)
    return pc.take(names, idx)


def decode_trace_request(req: ExportTraceServiceRequest, overrides: Overrides | None = None) -> DecodedBatch:
    """One row per usable span, in request order."""
    cols: list[list[Any]] = [[] for _ in TRACE_SCHEMA.names]
    (tids, sids, parents, names, kinds, starts, ends, codes, messages, attrs_col, events_col, links_col,
     resources, scope_names, scope_versions, states, flags) = cols  # fmt: skip
    rejected: list[Rejected] = []
    hexed: dict[bytes, str] = {}
    empty = b"[]"
    parsed: list[ParsedSpan] = []  # each kept span's attributes and events, for the extraction stage
    for ri, rs in enumerate(req.resource_spans):
        resource = dumps(attributes(rs.resource.attributes))
        for si, ss in enumerate(rs.scope_spans):
            scope_name = ss.scope.name or None
            scope_version = ss.scope.version or None
            kept = 0
            for spi, sp in enumerate(ss.spans):
                tid, sid, pid = sp.trace_id, sp.span_id, sp.parent_span_id
                if (
                    len(tid) != 16 or len(sid) != 8 or (pid and len(pid) != 8)
                    or tid == _Z16 or sid == _Z8 or (overrides and (ri, si, spi) in overrides)
                ):  # fmt: skip
                    reason = (overrides or {}).get((ri, si, spi)) or _span_reject_reason(tid, sid, pid)
                    rejected.append(Rejected(ri, si, spi, tid.hex(), sid.hex(), sp.name, reason))
                    continue
                kept += 1
                h = hexed.get(tid)
                if h is None:
                    h = hexed[tid] = tid.hex()
                tids.append(h)
                sids.append(sid.hex())
                parents.append(pid.hex() if pid else None)
                names.append(sp.name)
                kinds.append(sp.kind)
                starts.append(sp.start_time_unix_nano)
                ends.append(sp.end_time_unix_nano)
                codes.append(sp.status.code)
                messages.append(sp.status.message or None)
                attrs = attributes(sp.attributes)
                attrs_col.append(dumps(attrs))
                # `if evs:` is a C-level len(); most spans have no events or links
                evs = sp.events
                events = [{"name": e.name, "time_ns": e.time_unix_nano,
                           "attributes": attributes(e.attributes)} for e in evs] if evs else []  # fmt: skip
                events_col.append(dumps(events) if evs else empty)
                parsed.append((attrs, events))
                lks = sp.links
                links_col.append(
                    dumps([{"trace_id": lk.trace_id.hex(), "span_id": lk.span_id.hex(),
                            "attributes": attributes(lk.attributes)} for lk in lks]) if lks else empty
                )  # fmt: skip
                states.append(sp.trace_state or None)
                flags.append(sp.flags)
            resources.extend([resource] * kept)
            scope_names.extend([scope_name] * kept)
            scope_versions.extend([scope_version] * kept)
    s = pa.string()
    arrays = [
        pa.array(tids, s), pa.array(sids, s), pa.array(parents, s), pa.array(names, s),
        _enum_names(kinds, _KIND_ARR()), _u64_to_i64(starts), _u64_to_i64(ends),
        _enum_names(codes, _STATUS_ARR()), pa.array(messages, s),
        json_column(attrs_col), json_column(events_col), json_column(links_col), json_column(resources),
        pa.array(scope_names, s), pa.array(scope_versions, s), pa.array(states, s),
        pa.array(flags, pa.uint32()).cast(pa.int32(), safe=False),
    ]  # fmt: skip
    return DecodedBatch(pa.Table.from_arrays(arrays, schema=TRACE_SCHEMA), rejected, parsed)


def record_id(*parts: bytes) -> str:
    """A log record's identity: a hash of everything it says (OTLP gives records no id)."""
    h = hashlib.blake2b(digest_size=16)
    for part in parts:
        h.update(len(part).to_bytes(4, "little"))
        h.update(part)
    return h.hexdigest()


def decode_log_request(req: ExportLogsServiceRequest, overrides: Overrides | None = None) -> DecodedBatch:
    """One row per usable log record. trace/span ids are optional for logs (empty → null); present
    but of the wrong length rejects the record."""
    cols: dict[str, list[Any]] = {name: [] for name in LOG_SCHEMA.names}
    rejected: list[Rejected] = []
    for ri, rl in enumerate(req.resource_logs):
        resource = dumps(attributes(rl.resource.attributes))
        for si, sl in enumerate(rl.scope_logs):
            scope_name = sl.scope.name or None
            scope_version = sl.scope.version or None
            kept = 0
            for li, lr in enumerate(sl.log_records):
                tid, sid = lr.trace_id, lr.span_id
                reason = (overrides or {}).get((ri, si, li))
                if reason is None and tid and len(tid) != 16:
                    reason = f"trace_id not 16 bytes (got {len(tid)})"
                elif reason is None and sid and len(sid) != 8:
                    reason = f"span_id not 8 bytes (got {len(sid)})"
                if reason is not None:
                    rejected.append(Rejected(ri, si, li, tid.hex(), sid.hex(), lr.event_name, reason))
                    continue
                kept += 1
                body = dumps(any_value(lr.body) if lr.HasField("body") else None)
                attrs = dumps(attributes(lr.attributes))
                meta = f"{lr.time_unix_nano}|{lr.observed_time_unix_nano}|{lr.severity_number}|"
                meta += f"{lr.severity_text}|{lr.event_name}|{scope_name}|{scope_version}"
                cols["record_id"].append(record_id(tid, sid, meta.encode(), body, attrs, resource))
                cols["trace_id"].append(tid.hex() if tid else None)
                cols["span_id"].append(sid.hex() if sid else None)
                cols["time_ns"].append(lr.time_unix_nano)
                cols["observed_time_ns"].append(lr.observed_time_unix_nano)
                cols["severity_number"].append(lr.severity_number)
                cols["severity_text"].append(lr.severity_text or None)
                cols["event_name"].append(lr.event_name or None)
                cols["body"].append(body)
                cols["attributes"].append(attrs)
            cols["resource"].extend([resource] * kept)
            cols["scope_name"].extend([scope_name] * kept)
            cols["scope_version"].extend([scope_version] * kept)
    arrays = []
    for f in LOG_SCHEMA:
        if f.name in ("time_ns", "observed_time_ns"):
            arrays.append(_u64_to_i64(cols[f.name]))
        elif f.name in ("body", "attributes", "resource"):
            arrays.append(json_column(cols[f.name]))
        else:
            arrays.append(pa.array(cols[f.name], f.type))
    return DecodedBatch(pa.Table.from_arrays(arrays, schema=LOG_SCHEMA), rejected)
