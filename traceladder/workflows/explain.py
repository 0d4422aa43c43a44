"""`traceladder explain TRACE_ID`: how the store read one trace, printed so a user can report a
shape traceladder does not read in one paste.

Reads the trace's stored spans and log records and the store's convention setting (`store/`),
reads them again with the extraction stage (`extract.explain`), and renders the text (`render`,
pure): which convention claimed which span, each call with where it came from, the definitions,
and the tool activity no convention read with the reason the trace is not judged.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from traceladder.errors import UserError
from traceladder.extract.conventions.views import ExtractedCall
from traceladder.extract.explain import Explanation, explain
from traceladder.extract.reading import describe
from traceladder.extract.version import EXTRACTION_VERSION
from traceladder.store.db import open_store
from traceladder.store.settings import CONVENTIONS, recorded
from traceladder.store.writes import stored_rows
from traceladder.text import printable


def explain_trace(path: Path, trace_id: str) -> str:
    """The explanation of `trace_id` in the store at `path`, as text. A store that does not exist
    or holds no such trace is a `UserError`."""
    if not path.exists():
        raise UserError(f"no store at {path}; give --db or ingest traces first")
    with open_store(path, read_only=True, stale_notice=False) as store:
        conventions = recorded(store, CONVENTIONS) or ""
        with store.registered(
            "wanted_traces", pa.table({"trace_id": pa.array([trace_id], pa.string())})
        ) as conn:
            rows = stored_rows(conn)
    if rows.spans.num_rows == 0 and rows.logs.num_rows == 0:
        raise UserError(f"no trace {trace_id} in {path}; see `traceladder sql 'SELECT trace_id FROM traces'`")
    return render(explain(trace_id, rows, conventions), conventions)


def _short(text: str, limit: int) -> str:
    """Span data on one terminal line: escaped (`text.printable`), newlines shown, cut at `limit`."""
    shown = printable(text).replace("\n", "\\n").replace("\t", " ")
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def _call_line(c: ExtractedCall) -> str:
    where = f"{c.origin} ({c.convention})"
    if c.response_span_id:
        where += f", response of span {c.response_span_id}"
    if c.span_id and c.span_id != c.response_span_id:
        where += f", span {c.span_id}"
    if c.record_id:
        where += f", log record {c.record_id[:16]}"
    args = "absent" if c.arguments_raw is None else _short(c.arguments_raw, 80)
    return f"  #{c.ordinal} {c.tool_name} id={c.call_id or '-'} args={args} status={c.status} — from {where}"


def render(e: Explanation, conventions: str = "") -> str:
    """The text `explain` prints (pure)."""
    plugins = f"builtin,{conventions}" if conventions else "builtin"
    out = [
        f"trace {e.trace_id}: {len(e.spans)} spans, {e.records} log records; "
        f"read by extraction {EXTRACTION_VERSION} with conventions {plugins}",
        "",
        "spans (which convention read which span):",
    ]
    width = max((len(s.name) for s in e.spans), default=0)
    width = min(width, 48)
    for s in e.spans:
        by = f"{s.convention}: {s.role}" if s.convention else "— no convention"
        out.append(f"  {s.span_id}  {_short(s.name, 48):<{width}}  {by}")
    out += ["", f"calls ({len(e.calls)}):"]
    out += [_call_line(c) for c in e.calls] or ["  none read"]
    named = ", ".join(f"{d.name}{'' if d.parameters is not None else ' (no schema)'}" for d in e.definitions)
    out += ["", f"definitions ({len(e.definitions)}): {named or 'none recorded'}"]
    out += ["", "unread tool activity:"]
    if e.reading.unread:
        for u in e.reading.unread:
            ids = ", ".join(u.ids) + (", …" if u.items > len(u.ids) else "")
            out.append(f"  {describe([u])} — {u.source}; seen on {ids}")
    else:
        out.append("  none")
    out += ["", f"tools executed: {e.reading.executed}; calls read: {len(e.calls)}"]
    if e.reading.reason:
        out += [
            f"judged: no — every rung is not_evaluated: {e.reading.reason}",
            "A shape traceladder should read? Paste this output into an issue.",
        ]
    else:
        out.append("judged: yes — everything that says tool call was read")
    return "\n".join(out)
