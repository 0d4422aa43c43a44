"""Text into HTML: every string from a run (tool names, arguments, model output, span names) is
untrusted — a hostile model chooses all of them — and reaches the page only through these.

- `esc` for element content and quoted attribute values: `& < > " '` become entities, and control
  characters become visible `\\xNN` escapes (`traceladder.text.printable`), so data can neither
  open a tag nor hide itself.
- `script_json` for data inside `<script type="application/json">`: JSON whose `<`, `>` and `&`
  are `\\u` escapes, so no `</script>` or `<!--` can end or change the element, plus U+2028/2029
  (legal in JSON, line breaks to older JavaScript parsers).
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from traceladder.text import printable, utf8_safe

_SCRIPT_UNSAFE = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


def esc(value: object) -> str:
    """`value` as HTML text, safe in element content and in quoted attributes."""
    return html.escape(printable("" if value is None else value), quote=True)


def script_json(value: Any) -> str:
    """`value` as JSON that is safe as the whole content of a `<script>` element."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return utf8_safe(text).translate(_SCRIPT_UNSAFE)


def clip(text: str, limit: int) -> str:
    """At most `limit` characters, saying how many were left out."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text) - limit:,} more characters)"


def as_json(value: Any, limit: int = 2000) -> str:
    """A JSON value as compact display text (escaped by the caller)."""
    return clip(json.dumps(value, ensure_ascii=False, default=str), limit)


def when(value: object) -> str:
    """A stored time, or its ISO text, to the second (`2024-05-01 10:00:07`); other values as they are."""
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value).strftime("%Y-%m-%d %H:%M:%S")
        except ValueError:
            return value
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    return "—" if value is None else str(value)


def pct(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{value * 100:.{digits}f}%"


def signed_pp(value: float | None) -> str:
    """A pass-rate difference in percentage points, with an arrow as well as a sign."""
    if value is None:
        return "—"
    arrow = "▲" if value > 0 else "▼" if value < 0 else "="
    return f"{arrow} {value * 100:+.1f} pp"


def td(html: object, css: str = "") -> str:
    """A cell around HTML that is already escaped (`esc` it first)."""
    return f'<td class="{css}">{html}</td>' if css else f"<td>{html}</td>"


def table(heads: Sequence[str], rows: Iterable[str], attrs: str = "") -> str:
    """A table from header labels (trusted) and `<tr>` rows (escaped by the caller)."""
    head = "".join(f"<th>{h}</th>" for h in heads)
    opening = f"<table {attrs}>" if attrs else "<table>"
    return f"{opening}<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
