"""Charts as plain inline SVG: horizontal bars (counts, stacked counts, rates with their interval)
and a trace's span waterfall. No library and no script — the numbers are SVG text, so a chart reads
without JavaScript, prints, and is found by the browser's search. Colours come from the page's
stylesheet by class, and never carry meaning alone: every bar has its number or label beside it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from traceladder.reporting.html_text import clip, esc, pct

ROW = 22  # px per bar
LABEL = 190  # px for the label column
VALUE = 150  # px for the number column


@dataclass(frozen=True)
class Bar:
    """One row: `segments` are (value, css class, what it is) stacked left to right; `interval` a
    (low, high) whisker on a 0–1 scale; `text` the number printed beside the bar."""

    label: str
    segments: Sequence[tuple[float, str, str]]
    text: str
    interval: tuple[float, float] | None = None


def bars(rows: Sequence[Bar], *, title: str, width: int = 640, scale: float | None = None) -> str:
    """A horizontal bar chart. `scale` is the value of a full-width bar (1.0 for rates; default
    the largest total)."""
    if not rows:
        return ""
    top = scale or max((sum(v for v, _, _ in r.segments) for r in rows), default=0) or 1
    span = width - LABEL - VALUE
    height = ROW * len(rows) + 6
    out = [
        f'<svg class="chart" role="img" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'aria-label="{esc(title)}"><title>{esc(title)}</title>'
    ]
    if scale == 1.0:  # a rate: gridlines at 0, 50 and 100%
        for frac in (0.0, 0.5, 1.0):
            x = LABEL + frac * span
            out.append(f'<line class="grid" x1="{x:.1f}" x2="{x:.1f}" y1="0" y2="{height}"/>')
    for i, row in enumerate(rows):
        y = i * ROW + 3
        label = esc(clip(row.label, 28))
        out.append(
            f'<text class="label" x="{LABEL - 6}" y="{y + 14}" text-anchor="end">{label}'
            f"<title>{esc(row.label)}</title></text>"
        )
        x = float(LABEL)
        for value, css, what in row.segments:
            w = max(value / top * span, 0.0)
            if w > 0:
                out.append(
                    f'<rect class="{esc(css)}" x="{x:.1f}" y="{y + 3}" width="{w:.1f}" height="{ROW - 8}">'
                    f"<title>{esc(row.label)}: {esc(what)}</title></rect>"
                )
            x += w
        if row.interval is not None:
            lo, hi = (LABEL + v * span for v in row.interval)
            mid = y + ROW / 2 - 1
            path = f"M{lo:.1f} {mid - 4}v8M{lo:.1f} {mid}H{hi:.1f}M{hi:.1f} {mid - 4}v8"
            out.append(f'<path class="whisker" d="{path}"/>')
        out.append(f'<text class="value" x="{width - VALUE + 6}" y="{y + 14}">{esc(row.text)}</text>')
    out.append("</svg>")
    return "".join(out)


def rate_bar(label: str, passed: int, scored: int, interval: tuple[float, float] | None) -> Bar:
    """A pass rate on a 0–1 scale, with its interval and `65.2% (45/69)` beside it."""
    value = passed / scored if scored else None
    text = f"{pct(value)} ({passed}/{scored})" if scored else "nothing scored"
    return Bar(label, [(value or 0.0, "pass", f"{pct(value)} passed")], text, interval)


_KIND = {"invoke_agent": "agent", "chat": "chat", "execute_tool": "tool"}


def waterfall(spans: Sequence[Mapping[str, Any]], *, width: int = 780) -> str:
    """A trace's spans as bars on one time axis: the row's label is the span name (indented under
    its parent), the bar runs from start to end, the duration is printed. Error spans say so in
    text (✕ and the error type), not only in colour. A span that ends before it starts (a skewed
    clock) is drawn as a point and labelled `duration unknown`."""
    timed = [s for s in spans if s.get("start_ns") is not None]
    if not timed:
        return '<p class="muted">No spans with times are stored for this trace.</p>'
    t0 = min(s["start_ns"] for s in timed)
    t1 = max(max(s["start_ns"], s.get("end_ns") or s["start_ns"]) for s in timed)
    total = max(t1 - t0, 1)
    depth = _depths(timed)
    label_w, value_w = 260, 190
    span_w = width - label_w - value_w
    height = ROW * len(timed) + 22
    out = [
        f'<svg class="waterfall" role="img" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'aria-label="span waterfall, {len(timed)} spans over {total / 1e6:.1f} ms">'
        f"<title>span waterfall: {len(timed)} spans, {total / 1e6:.1f} ms</title>",
        f'<text class="axis" x="{label_w}" y="12">0 ms</text>'
        f'<text class="axis" x="{width - value_w}" y="12" text-anchor="end">{total / 1e6:.1f} ms</text>',
    ]
    for i, s in enumerate(timed):
        y = i * ROW + 18
        end = s.get("end_ns")
        known = end is not None and end >= s["start_ns"]
        x = label_w + (s["start_ns"] - t0) / total * span_w
        w = max((end - s["start_ns"]) / total * span_w, 2.0) if known else 2.0
        error = s.get("status_code") == "ERROR"
        css = _KIND.get(str(s.get("operation")), "other") + (" error" if error else "")
        name = ("✕ " if error else "") + str(s.get("name") or s.get("operation") or "span")
        indent = 8 * min(depth.get(s["span_id"], 0), 6)
        dur = f"{(end - s['start_ns']) / 1e6:.2f} ms" if known else "duration unknown"
        what = f"{name}: {dur}" + (f", error {s.get('error_type')}" if error and s.get("error_type") else "")
        out.append(
            f'<text class="label" x="{4 + indent}" y="{y + 14}">{esc(clip(name, 34))}</text>'
            f'<rect class="{css}" x="{x:.1f}" y="{y + 3}" width="{w:.1f}" height="{ROW - 8}">'
            f"<title>{esc(what)}</title></rect>"
            f'<text class="value" x="{width - value_w + 6}" y="{y + 14}">{esc(dur)}'
            f"{' ✕ ' + esc(s.get('error_type') or 'error') if error else ''}</text>"
        )
    out.append("</svg>")
    return "".join(out)


def _depths(spans: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Each span's depth under the trace's roots (a span whose parent is absent is a root)."""
    parent = {s["span_id"]: s.get("parent_span_id") for s in spans}
    out: dict[str, int] = {}
    for span_id in parent:
        d, p, seen = 0, parent[span_id], {span_id}
        while p in parent and p not in seen:  # a cycle in hostile data must not loop forever
            seen.add(p)
            d, p = d + 1, parent[p]
        out[span_id] = d
    return out
