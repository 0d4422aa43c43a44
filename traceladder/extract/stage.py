"""The extraction stage: a batch of decoded spans and log records → the rows derived from them.

Pure: it reads only what it is handed (`store.derived.Batch`: the batch, and what the store
holds of the traces that already had rows) and returns `store.derived.DerivedRows`, which the
store writes as given. Each span's attributes are parsed once here, for both of its uses:

* per span, the derived columns the store keeps beside the attributes (`annotate`): the role the
  conventions give it and, for a tool span, the tool columns of the convention that decided it;
* per trace, from everything the trace will hold once the batch is stored (the stored rows, then
  the batch's rows not stored yet, first copy first — exactly what a rebuild from the store reads,
  so `traceladder reindex` gives the same rows as the write did): its tool calls and definitions
  (`conventions.extract_trace`) and its agent's name.

Every row is stamped with `EXTRACTION_VERSION` and the conventions in force. What each convention
read and what no convention read (`extract.reading`: the spans claimed, the tool activity left
unread, and the reason a trace's calls cannot be judged whole) is computed here from the same
parsed views; later outputs (conversations) are further tables of `DerivedRows`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import pairwise
from typing import Any

import orjson
import pyarrow as pa

from traceladder.decode.decoded import ParsedSpan
from traceladder.extract.conventions import LogView, SpanView, extract_trace, registry
from traceladder.extract.conventions.attribute_values import text
from traceladder.extract.conventions.base import TOOL, ToolColumns
from traceladder.extract.conventions.otel_genai import ERROR_TYPE, OPERATION
from traceladder.extract.conventions.views import ExtractedCall, ToolDefinition
from traceladder.extract.conversation_keys import conversation_key
from traceladder.extract.reading import Reading, read_trace
from traceladder.extract.version import EXTRACTION_VERSION, conventions_stamp
from traceladder.store.derived import (
    CALL_SCHEMA,
    CONVERSATION_KEY_SCHEMA,
    DEFINITION_SCHEMA,
    DERIVED_SPAN_COLUMNS,
    DERIVED_SPAN_FIELDS,
    PRIOR_CALL_SCHEMA,
    READING_SCHEMA,
    STORED_LOG_COLUMNS,
    STORED_SPAN_COLUMNS,
    TRACE_FACT_SCHEMA,
    Batch,
    DerivedRows,
    Stamp,
    TraceRows,
)

_NO_EVENTS = ("[]", "", b"[]", b"", None)


def _json(raw: Any, default: Any) -> Any:
    if raw is None:
        return default
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:  # the store only holds valid JSON; never fail a write on it
        if isinstance(raw, bytes | memoryview):  # not UTF-8 (`_JSON_TEXTS`): read as well as it can be
            return _json(bytes(raw).decode("utf-8", "replace"), default)
        return default


# Columns holding JSON text that the stage only ever parses: read as the UTF-8 bytes Arrow holds,
# which orjson parses directly, instead of first building a Python str of every 4 KB text (and, for
# text that is not ASCII, orjson encoding it back to UTF-8). The same values either way (`_json`).
_JSON_TEXTS = frozenset({"attributes", "events", "resource"})
# Of those, the texts parsed once each and dropped: handed to orjson as views of Arrow's buffer,
# not copied into a bytes object first (a span's 4 KB of attributes, ~12% of the span views' cost,
# measured). `events` and `resource` stay bytes: mostly `[]`, compared by value (`_NO_EVENTS`), and
# a trace's resources are told apart by value in a set.
_JSON_VIEWS = frozenset({"attributes"})


def _text_views(column: pa.ChunkedArray) -> list[memoryview | None]:
    """Each value of a string column as a view of its UTF-8 bytes in Arrow's buffer (None for a
    null); a view keeps its buffer alive."""
    out: list[memoryview | None] = []
    for chunk in column.chunks:
        n = len(chunk)
        _, offsets, data = chunk.buffers()
        if offsets is None or data is None:  # no values, or every one empty
            out.extend(chunk.cast(pa.binary()).to_pylist())
            continue
        ends = memoryview(offsets).cast("i")[chunk.offset : chunk.offset + n + 1].tolist()
        view = memoryview(data).cast("B")  # unsigned bytes: compared with memcmp, like bytes
        texts: list[memoryview | None] = [view[a:b] for a, b in pairwise(ends)]
        if chunk.null_count:
            texts = [t if ok else None for t, ok in zip(texts, chunk.is_valid().to_pylist(), strict=True)]
        out.extend(texts)
    return out


def _column(table: pa.Table | None, name: str) -> list[Any]:
    if table is None or name not in table.column_names:
        return [] if table is None else [None] * table.num_rows
    column = table.column(name)
    if name in _JSON_VIEWS and pa.types.is_string(column.type):
        return _text_views(column)
    if name in _JSON_TEXTS and pa.types.is_string(column.type):
        return column.cast(pa.binary()).to_pylist()  # zero-copy cast: the same buffers
    try:
        return column.to_pylist()
    except UnicodeDecodeError:
        # Text that is not UTF-8 is the store's to refuse (one clear reason, the batch set aside);
        # the stage reads it as well as it can and never fails on what a producer sent.
        raw = column.cast(pa.binary()).to_pylist()
        return [None if v is None else v.decode("utf-8", "replace") for v in raw]


_SPAN_FIELDS = STORED_SPAN_COLUMNS
_LOG_FIELDS = STORED_LOG_COLUMNS


def _rows(
    table: pa.Table | None, names: tuple[str, ...], skip: frozenset[str] = frozenset()
) -> Iterator[tuple[Any, ...]]:
    """The rows of `table` as tuples of `names` (a missing column, or one in `skip`, reads as
    None), in order: plain Python values, not yet parsed — a trace's JSON is parsed only when its
    turn comes, so the stage holds one trace's parsed views at a time, not the batch's."""
    if table is None or table.num_rows == 0:
        return iter(())
    n = table.num_rows
    return zip(*([None] * n if c in skip else _column(table, c) for c in names), strict=True)


# The texts a row's decoded attributes and events stand for: not converted to Python when every
# row of the batch comes with them (a 4 KB text costs its copy into a Python str).
_DECODED_TEXTS = frozenset({"attributes", "events"})


def _span_view(row: tuple[Any, ...], decoded: ParsedSpan | None = None) -> SpanView:
    """The view of one span row; `decoded`: its attributes and events as the decoder parsed them
    (what the row's texts parse to), read instead of the texts."""
    _, sid, parent, name, kind, start, end, status, message, attrs, events, scope, _resource = row
    if decoded is not None:
        parsed, events_list = decoded
    else:
        parsed = _json(attrs, {})
        events_list = [] if events in _NO_EVENTS else _json(events, [])
    return SpanView(
        span_id=sid,
        parent_span_id=parent,
        name=name,
        kind=kind,
        start_ns=start or 0,
        end_ns=end or 0,
        status_code=status or "UNSET",
        status_message=message,
        attributes=parsed if isinstance(parsed, dict) else {},
        events=events_list,
        scope_name=scope,
    )  # fmt: skip


def _decoded(parsed: Sequence[ParsedSpan | None] | None, i: int) -> ParsedSpan | None:
    """Row `i`'s decoded attributes and events, if the batch carries them (-1: a stored row)."""
    return None if parsed is None or i < 0 else parsed[i]


def _log_view(row: tuple[Any, ...]) -> LogView:
    _, rid, sid, time_ns, event, body, attrs, scope = row
    parsed = _json(attrs, {})
    return LogView(
        record_id=rid,
        span_id=sid,
        time_ns=time_ns or 0,
        event_name=event,
        body=_json(body, None),
        attributes=parsed if isinstance(parsed, dict) else {},
        scope_name=scope,
    )  # fmt: skip


def trace_views(rows: TraceRows, trace_id: str) -> tuple[list[SpanView], list[LogView]]:
    """One trace's stored spans (start order) and log records as the stage reads them, each once."""
    spans: dict[str, SpanView] = {}
    for row in _rows(rows.spans, _SPAN_FIELDS):
        if row[0] == trace_id and row[1] not in spans:
            spans[row[1]] = _span_view(row)
    logs: dict[str, LogView] = {}
    for row in _rows(rows.logs, _LOG_FIELDS):
        if row[0] == trace_id and row[1] not in logs:
            logs[row[1]] = _log_view(row)
    return sorted(spans.values(), key=lambda s: (s.start_ns or 0, s.span_id)), list(logs.values())


def span_columns(span: SpanView, hooks: registry.Hooks) -> tuple[str | None, ...]:
    """The derived columns of one span (`DERIVED_SPAN_COLUMNS`): its tool columns as the
    convention that calls it a tool span reads them, and its role."""
    decided = registry.role_of(span, hooks)
    attrs = span.attributes
    found: ToolColumns | None = None
    if decided is not None and decided[0] == TOOL:
        found = decided[1].tool_columns(attrs)
    if found is None:
        found = ToolColumns(
            text(attrs.get(OPERATION)), None, None, None, None, text(attrs.get(ERROR_TYPE)), None
        )
    return (*found, decided[0] if decided is not None else None)


def _agent_name(spans: Iterable[SpanView], hooks: registry.Hooks) -> str | None:
    """Of the first convention (in precedence order) any span gives a name for, the greatest."""
    for convention in hooks.agent_name:
        names = [n for n in (convention.agent_name(s) for s in spans) if n is not None]
        if names:
            return max(names)
    return None


def _call_row(trace_id: str, c: ExtractedCall) -> tuple[Any, ...]:
    return (trace_id, c.ordinal, c.tool_name, c.call_id, c.arguments_raw, c.result, c.status, c.error_type,
            c.convention, c.origin, c.span_id, c.response_span_id, c.record_id, c.turn, c.call_index,
            c.start_ns, c.end_ns)  # fmt: skip


def _resources(rows: Iterable[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """The distinct resources of a trace's spans, parsed (usually one)."""
    parsed = (_json(raw, {}) for raw in {row[-1] for row in rows if row[-1]})
    return [r for r in parsed if isinstance(r, dict)]


def _definition_row(trace_id: str, d: ToolDefinition) -> tuple[Any, ...]:
    return (trace_id, d.name, d.description, d.parameters, d.convention, d.span_id, d.offered)


def _reading_rows(trace_id: str, reading: Reading) -> Iterator[tuple[Any, ...]]:
    claimed: dict[tuple[str, str], list[str]] = {}
    for claim in reading.claims:
        claimed.setdefault((claim.convention, claim.role), []).append(claim.span_id)
    for (convention, role), spans in sorted(claimed.items()):
        yield (trace_id, convention, role, None, "span", len(spans), None)
    for u in reading.unread:
        yield (trace_id, None, None, u.shape, u.source, u.items, orjson.dumps(list(u.ids)).decode())


def _table(rows: list[tuple[Any, ...]], schema: pa.Schema) -> pa.Table:
    columns = zip(*rows, strict=True) if rows else ([] for _ in schema.names)
    return pa.table(dict(zip(schema.names, map(list, columns), strict=True)), schema=schema)


def _with_span_columns(table: pa.Table, derived: list[tuple[str | None, ...]]) -> pa.Table:
    columns = list(zip(*derived, strict=True)) if derived else [() for _ in DERIVED_SPAN_FIELDS]
    for field, values in zip(DERIVED_SPAN_FIELDS, columns, strict=True):
        array = pa.array(list(values), field.type)
        at = table.schema.get_field_index(field.name)
        table = table.set_column(at, field, array) if at >= 0 else table.append_column(field, array)
    return table


class Stage:
    """`store.derived.Extraction`, with the conventions of `traceladder.extract.conventions`."""

    version = EXTRACTION_VERSION

    def stamp(self, conventions: str) -> Stamp:
        """The stamp of rows derived with the plug-ins named in `conventions`."""
        return Stamp(EXTRACTION_VERSION, conventions_stamp(conventions))

    def check(self, conventions: str) -> None:
        """Raises `UserError` when a plug-in named in `conventions` is not installed or fails to load."""
        with registry.in_force(conventions):
            registry.conventions()

    def extract(self, batch: Batch, conventions: str) -> DerivedRows:
        with registry.in_force(conventions):
            return self._extract(batch, self.stamp(conventions))

    def _extract(self, batch: Batch, stamp: Stamp) -> DerivedRows:
        hooks = registry.hooks()
        # Per trace, by span id (record id): the stored copy, then the batch's first — what the
        # store holds once the batch is written. A batch row's position, to give its derived
        # columns back in the batch's order (-1: a stored span, already written).
        spans: dict[str, dict[str, tuple[int, tuple[Any, ...]]]] = {}
        logs: dict[str, dict[str, tuple[Any, ...]]] = {}
        for row in _rows(batch.stored.spans, _SPAN_FIELDS):
            spans.setdefault(row[0], {}).setdefault(row[1], (-1, row))
        for row in _rows(batch.stored.logs, _LOG_FIELDS):
            if row[0] is not None:
                logs.setdefault(row[0], {}).setdefault(row[1], row)
        positions: dict[str, list[tuple[int, tuple[Any, ...]]]] = {}
        decoded = batch.parsed
        skip = _DECODED_TEXTS if decoded is not None and all(p is not None for p in decoded) else frozenset()
        for i, row in enumerate(_rows(batch.spans, _SPAN_FIELDS, skip)):
            positions.setdefault(row[0], []).append((i, row))
            spans.setdefault(row[0], {}).setdefault(row[1], (i, row))
        for row in _rows(batch.logs, _LOG_FIELDS):
            if row[0] is not None:
                logs.setdefault(row[0], {}).setdefault(row[1], row)
        derived: list[tuple[str | None, ...]] = [()] * (0 if batch.spans is None else batch.spans.num_rows)
        calls: list[tuple[Any, ...]] = []
        definitions: list[tuple[Any, ...]] = []
        facts: list[tuple[Any, ...]] = []
        reading: list[tuple[Any, ...]] = []
        keys: list[tuple[Any, ...]] = []
        prior: list[tuple[Any, ...]] = []
        trace_ids = sorted(spans.keys() | logs.keys())
        for tid in trace_ids:
            # one view per span, its role decided once for the three readers of it
            with registry.roles_remembered():
                stored = list(spans.pop(tid, {}).values())
                found_views = [(i, _span_view(row, _decoded(decoded, i))) for i, row in stored]
                kept = [v for _, v in found_views]
                of_batch = {i: v for i, v in found_views if i >= 0}
                for i, row in positions.pop(tid, []):
                    # a repeat inside the batch is not stored (the first copy is); it is read alone
                    derived[i] = span_columns(of_batch.get(i) or _span_view(row, _decoded(decoded, i)), hooks)
                log_views = [_log_view(r) for r in logs.pop(tid, {}).values()]
                found = extract_trace(kept, log_views)
                calls.extend(_call_row(tid, c) for c in found.calls)
                definitions.extend(_definition_row(tid, d) for d in found.definitions)
                read = read_trace(kept, log_views, [*found.calls, *found.prior], hooks)
                reading.extend(_reading_rows(tid, read))
                facts.append((tid, _agent_name(kept, hooks), read.reason))
                key = conversation_key((v.attributes for v in kept), _resources(row for _, row in stored))
                if key is not None:
                    keys.append((tid, *key))
                prior.extend((tid, c.ordinal, c.tool_name, c.call_id, c.arguments_raw) for c in found.prior)
        return DerivedRows(
            stamp=stamp,
            trace_ids=pa.array(trace_ids, pa.string()),
            spans=None if batch.spans is None else _with_span_columns(batch.spans, derived),
            calls=_table(calls, CALL_SCHEMA),
            definitions=_table(definitions, DEFINITION_SCHEMA),
            facts=_table(facts, TRACE_FACT_SCHEMA),
            reading=_table(reading, READING_SCHEMA),
            keys=_table(keys, CONVERSATION_KEY_SCHEMA),
            prior=_table(prior, PRIOR_CALL_SCHEMA),
        )


STAGE = Stage()

__all__ = ["DERIVED_SPAN_COLUMNS", "EXTRACTION_VERSION", "STAGE", "Stage", "span_columns", "trace_views"]
