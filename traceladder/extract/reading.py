"""How much of a trace the conventions read: the spans each claimed, and the tool activity nobody read.

Pure, like the rest of the stage. A convention that does not know a producer's shape reads
nothing from it, and a ladder with no calls to check has nothing to fail: an unknown shape would
come out PASS. So after extraction the stage looks at the trace once more, convention-blind, for
anything that *says* tool call and is not accounted for by a call it extracted:

* a **span** whose name or operation says tool execution (`execute_tool`, `ai.toolCall`,
  `tool_use`, `functionCall`, …) that no convention claimed as a tool span, or that one claimed
  without a tool name to read;
* an **attribute**, **span event** or **log record** whose keys (flat dotted keys, or keys inside
  a JSON value) name a tool call (`tool_calls`, `toolCall`, `tool_use`, `toolUse`, `function_call`,
  `functionCall`, …), or a JSON object whose `type` does, naming a call id — or, when it names
  none, a tool — that no extracted call has.

Each unread thing is grouped by its shape (a span name; an attribute key with indexes as `N`)
into `Unread` rows, and a trace that has any — or fewer extracted calls than tools executed — gets
a `reason`: every rung that reads calls is then `not_evaluated` with it, never PASS
(docs/conventions.md, "What traceladder does with a shape it cannot read").

An item naming neither an id nor a tool (a bare `{"type": "tool_use"}` chunk) identifies nothing
and is not counted; `finish_reason: "tool_calls"` is a value, not a key, and not counted either.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from traceladder.extract.conventions import registry
from traceladder.extract.conventions.base import TOOL
from traceladder.extract.conventions.views import ExtractedCall, LogView, SpanView
from traceladder.extract.tool_items import (
    ATTRIBUTE,
    EVENT,
    LOG,
    SPAN,
    Calls,
    Item,
    Texts,
    ids_names,
    log_items,
    shape,
    span_items,
)
from traceladder.instrumentation import semconv as sc

# A span name that says tool execution: one of the tokens, or MCP's `tools/call`.
_SPAN_NAME = re.compile(
    r"(?i)(?:^|[^a-z])"
    r"(?:execute[_ ]?tool|tool[_ ]?calls?|tool[_ ]?use|function[_ ]?calls?|tools/call)"
    r"(?:$|[^a-z])"
)
_EXAMPLES = 5  # ids kept per unread shape (explain prints them; the count is exact)


class Claim(NamedTuple):
    """A span a convention claimed, and as what."""

    span_id: str
    name: str
    convention: str
    role: str


class Unread(NamedTuple):
    """Tool activity of one shape that no convention read: `items` how many (spans, attribute
    groups, events or records), `ids` the first few spans or records it was seen on."""

    shape: str
    source: str  # "span" | "attribute" | "span_event" | "log_record"
    items: int
    ids: tuple[str, ...]


class Reading(NamedTuple):
    """What the stage read of one trace; `reason` is set when its calls cannot be trusted whole."""

    claims: list[Claim]
    unread: list[Unread]
    executed: int  # tool executions the trace shows (nested copies of one counted once)
    reason: str | None


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


_UNITS = {SPAN: "span", ATTRIBUTE: "span", EVENT: "span event", LOG: "log record"}


def describe(unread: Sequence[Unread]) -> str:
    """One line naming every unread shape with its count: `ai.toolCall (3 spans), …`."""
    return ", ".join(f"{u.shape} ({_plural(u.items, _UNITS.get(u.source, 'item'))})" for u in unread)


def reason_of(unread: Sequence[Unread], executed: int, calls: int) -> str | None:
    """Why a trace's calls cannot be judged, or None when everything was read."""
    parts = []
    if unread:
        parts.append(f"tool activity in a shape traceladder does not read: {describe(unread)}")
    if calls < executed:
        parts.append(f"fewer calls read ({calls}) than tools executed ({executed})")
    if not parts:
        return None
    return "; ".join(parts) + " (run `traceladder explain TRACE_ID`)"


# ---- the reading of one trace -----------------------------------------------------------------------


def _tool_like(span: SpanView) -> bool:
    op = span.attributes.get(sc.OPERATION_NAME)
    return op == sc.OP_EXECUTE_TOOL or bool(_SPAN_NAME.search(span.name or ""))


def read_trace(
    spans: Sequence[SpanView], logs: Sequence[LogView], calls: Sequence[ExtractedCall], hooks: registry.Hooks
) -> Reading:
    """The reading of one trace, given everything stored for it and the calls extracted from it."""
    unique = {s.span_id: s for s in spans}
    claims: list[Claim] = []
    tool_spans: dict[str, SpanView] = {}  # spans that executed a tool, claimed or not
    items: list[Item] = []  # what no call accounts for (and tool spans, decided below)
    read = Calls({c.call_id for c in calls if c.call_id}, {c.tool_name for c in calls if c.tool_name})
    call_spans = {c.span_id for c in calls if c.span_id}
    unclaimed: list[SpanView] = []  # tool-looking spans no convention claimed
    texts = Texts(read)
    skipped = {s.span_id for s in unique.values() if registry.simulated_user(s)}
    for span in sorted(unique.values(), key=lambda s: (s.start_ns or 0, s.span_id)):
        if not isinstance(span.attributes, dict) or span.span_id in skipped:
            continue  # a simulated user's span is not the agent's: its tool talk is nobody's call
        decided = registry.role_of(span, hooks)
        if decided is not None:
            role, convention = decided
            claims.append(Claim(span.span_id, span.name, convention.name, role))
            if role == TOOL:
                tool_spans[span.span_id] = span
                execution = registry.execution_of(span, convention)
                if (execution is None or not execution.name) and span.span_id not in call_spans:
                    items.append(
                        Item(f"{span.name} (no tool name)", SPAN, span.span_id, frozenset(), frozenset())
                    )
        elif _tool_like(span):
            tool_spans[span.span_id] = span
            unclaimed.append(span)
        items.extend(span_items(span, texts))
    for span in unclaimed:
        if span.span_id in call_spans or _wraps_read(span, tool_spans, call_spans):
            continue
        ids: set[str] = set()
        # the semantic-convention span name is `execute_tool {tool}`: a word of it may be the tool
        names: set[str] = set(re.split(r"[\s/]+", span.name or "")) - {""}
        ids_names(span.attributes, ids, names)
        items.append(Item(shape(span.name), SPAN, span.span_id, frozenset(ids), frozenset(names)))
    for record in {r.record_id: r for r in logs}.values():
        if isinstance(record.attributes, dict) and record.span_id not in skipped:
            items.extend(log_items(record, texts))
    unread: dict[tuple[str, str], list[str]] = {}
    for item in items:
        # a tool span that identifies nothing cannot be matched to a call: it is unread
        identified = item.source != SPAN or bool(item.ids or item.names)
        if not identified or not read.read(item.ids, item.names):
            unread.setdefault((item.shape, item.source), []).append(item.at)
    rows = [
        Unread(kind, source, len(at), tuple(dict.fromkeys(at))[:_EXAMPLES])
        for (kind, source), at in sorted(unread.items(), key=lambda kv: (kv[0][1] != SPAN, kv[0]))
    ]
    executed = _executed(tool_spans)
    return Reading(claims, rows, executed, reason_of(rows, executed, len(calls)))


def _wraps_read(span: SpanView, tool_spans: dict[str, SpanView], call_spans: set[str]) -> bool:
    """Whether an unclaimed tool-looking span is the client side of a tool span whose call was
    read (MCP's `MCP send tools/call x` around the server's `tools/call x`): its parent or a child."""
    if span.parent_span_id in call_spans:
        return True
    return any(s.parent_span_id == span.span_id and s.span_id in call_spans for s in tool_spans.values())


def _executed(tool_spans: dict[str, SpanView]) -> int:
    """Tool executions: tool spans whose parent is not a tool span (an instrumentation's span
    around the framework's own span of one execution is one execution)."""
    return sum(1 for s in tool_spans.values() if s.parent_span_id not in tool_spans)


__all__ = ["Claim", "Reading", "Unread", "describe", "read_trace", "reason_of"]
