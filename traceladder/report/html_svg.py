"""Charts as plain inline SVG: horizontal bars (counts, stacked counts, rates with their interval)
and a trace's span waterfall. No library and no script — the numbers are SVG text, so a chart reads
without JavaScript, prints, and is found by the browser's search. Colours come from the page's
stylesheet by class, and never carry meaning alone: every bar has its number or label beside it.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from traceladder.report.html_text import esc, pct

ROW = 22  # px per bar of a one-line label
LINE = 14  # px per line of a wrapped label
SPAN = 300  # px of the bars themselves
LABEL_MAX = 300  # px: a label wider than this wraps onto more lines, it is never cut
LABEL_MIN = 80
VALUE_MIN = 150
# Labels are set in the stylesheet's monospace face at 12px (`svg text.label`), so a width can be
# reckoned from the text alone: 0.6 em per character, rounded up, and two cells for a wide (CJK)
# character. The browser test measures the rendered labels against the column this reserves.
CELL = 7.4
PAD = 10


def text_width(text: str) -> float:
    """The px width `text` takes in a chart's label face."""
    return CELL * sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


_BREAK_AFTER = frozenset(" _-/.:·,)")


def wrap(text: str, width: float) -> list[str]:
    """`text` as lines no wider than `width` px whose concatenation is exactly `text`: each line
    breaks after the last space, `_`, `-`, `/`, `.`, `:`, `·`, `,` or `)` that fits, or, in a run
    with none, where the width runs out."""
    lines: list[str] = []
    rest = text
    while text_width(rest) > width:
        fit, used = 0, 0.0
        for ch in rest:
            used += text_width(ch)
            if used > width:
                break
            fit += 1
        fit = max(fit, 1)  # a character wider than the column still advances
        breaks = [i + 1 for i in range(fit) if rest[i] in _BREAK_AFTER and i + 1 < len(rest)]
        cut = breaks[-1] if breaks and breaks[-1] > fit // 3 else fit
        lines.append(rest[:cut])
        rest = rest[cut:]
    return [*lines, rest] if rest or not lines else lines


def _label(x: float, top: float, height: float, lines: Sequence[str], anchor: str = "end") -> str:
    """A label of one or more lines, centred on a row `height` px tall starting at `top`."""
    first = top + (height - LINE * len(lines)) / 2 + 11
    spans = "".join(
        f'<tspan x="{x:.1f}" y="{first + i * LINE:.1f}">{esc(line)}</tspan>' for i, line in enumerate(lines)
    )
    return f'<text class="label" text-anchor="{anchor}">{spans}</text>'


@dataclass(frozen=True)
class Bar:
    """One row: `segments` are (value, css class, what it is) stacked left to right; `interval` a
    (low, high) whisker on a 0–1 scale; `text` the number printed beside the bar."""

    label: str
    segments: Sequence[tuple[float, str, str]]
    text: str
    interval: tuple[float, float] | None = None


def bars(rows: Sequence[Bar], *, title: str, scale: float | None = None) -> str:
    """A horizontal bar chart. `scale` is the value of a full-width bar (1.0 for rates; default
    the largest total). The label column fits the longest label up to `LABEL_MAX`; a longer label
    wraps and its row grows, so every label is printed whole."""
    if not rows:
        return ""
    top = scale or max((sum(v for v, _, _ in r.segments) for r in rows), default=0) or 1
    label_w = max(LABEL_MIN, min(LABEL_MAX, max(text_width(r.label) for r in rows))) + PAD
    value_w = max(VALUE_MIN, max(text_width(r.text) for r in rows) + PAD)
    width = label_w + SPAN + value_w
    wrapped = [wrap(r.label, label_w - PAD) for r in rows]
    heights = [max(ROW, LINE * len(lines) + 8) for lines in wrapped]
    height = sum(heights) + 6
    out = [
        f'<svg class="chart" role="img" viewBox="0 0 {width:.0f} {height}" width="{width:.0f}" '
        f'height="{height}" aria-label="{esc(title)}"><title>{esc(title)}</title>'
    ]
    if scale == 1.0:  # a rate: gridlines at 0, 50 and 100%
        for frac in (0.0, 0.5, 1.0):
            x = label_w + frac * SPAN
            out.append(f'<line class="grid" x1="{x:.1f}" x2="{x:.1f}" y1="0" y2="{height}"/>')
    y = 3.0
    for row, lines, h in zip(rows, wrapped, heights, strict=True):
        out.append(_label(label_w - PAD / 2, y, h, lines))
        bar_y = y + (h - ROW) / 2  # the bar sits in the middle of its row
        x = float(label_w)
        for value, css, what in row.segments:
            w = max(value / top * SPAN, 0.0)
            if w > 0:
                out.append(
                    f'<rect class="{esc(css)}" x="{x:.1f}" y="{bar_y + 3:.1f}" width="{w:.1f}" '
                    f'height="{ROW - 8}">'
                    f"<title>{esc(row.label)}: {esc(what)}</title></rect>"
                )
            x += w
        if row.interval is not None:
            lo, hi = (label_w + v * SPAN for v in row.interval)
            mid = bar_y + ROW / 2 - 1
            path = f"M{lo:.1f} {mid - 4:.1f}v8M{lo:.1f} {mid:.1f}H{hi:.1f}M{hi:.1f} {mid - 4:.1f}v8"
            out.append(f'<path class="whisker" d="{path}"/>')
        value_x = width - value_w + 6
        out.append(f'<text class="value" x="{value_x:.1f}" y="{bar_y + 14:.1f}">{esc(row.text)}</text>')
        y += h
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
    rows = []
    for s in timed:
        error = s.get("status_code") == "ERROR"
        name = ("✕ " if error else "") + str(s.get("name") or s.get("operation") or "span")
        indent = 8 * min(depth.get(s["span_id"], 0), 6)
        lines = wrap(name, label_w - indent - PAD)  # a long span name wraps: it is never cut
        rows.append((s, error, name, indent, lines, max(ROW, LINE * len(lines) + 8)))
    height = sum(r[-1] for r in rows) + 22
    out = [
        f'<svg class="waterfall" role="img" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'aria-label="span waterfall, {len(timed)} spans over {total / 1e6:.1f} ms">'
        f"<title>span waterfall: {len(timed)} spans, {total / 1e6:.1f} ms</title>",
        f'<text class="axis" x="{label_w}" y="12">0 ms</text>'
        f'<text class="axis" x="{width - value_w}" y="12" text-anchor="end">{total / 1e6:.1f} ms</text>',
    ]
    y = 18.0
    for s, error, name, indent, lines, h in rows:
        end = s.get("end_ns")
        known = end is not None and end >= s["start_ns"]
        x = label_w + (s["start_ns"] - t0) / total * span_w
        w = max((end - s["start_ns"]) / total * span_w, 2.0) if known else 2.0
        css = _KIND.get(str(s.get("operation")), "other") + (" error" if error else "")
        dur = f"{(end - s['start_ns']) / 1e6:.2f} ms" if known else "duration unknown"
        what = f"{name}: {dur}" + (f", error {s.get('error_type')}" if error and s.get("error_type") else "")
        bar_y = y + (h - ROW) / 2
        out.append(
            _label(4 + indent, y, h, lines, anchor="start")
            + f'<rect class="{css}" x="{x:.1f}" y="{bar_y + 3:.1f}" width="{w:.1f}" height="{ROW - 8}">'
            f"<title>{esc(what)}</title></rect>"
            f'<text class="value" x="{width - value_w + 6}" y="{bar_y + 14:.1f}">{esc(dur)}'
            f"{' ✕ ' + esc(s.get('error_type') or 'error') if error else ''}</text>"
        )
        y += h
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
