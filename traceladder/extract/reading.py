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
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import Any, NamedTuple

import orjson

from traceladder.extract.conventions import registry
from traceladder.extract.conventions.attribute_values import python_literal
from traceladder.extract.conventions.base import TOOL
from traceladder.extract.conventions.views import ExtractedCall, LogView, SpanView
from traceladder.instrumentation import semconv as sc

# A key segment (or a JSON object's `type`) that names a tool call, case and separators aside.
_TOOL_TOKENS = frozenset(
    {"toolcall", "toolcalls", "tooluse", "tooluses", "functioncall", "functioncalls", "toolinvocation",
     "toolinvocations", "executetool"}
)  # fmt: skip
# A span name that says tool execution: one of the tokens, or MCP's `tools/call`.
_SPAN_NAME = re.compile(
    r"(?i)(?:^|[^a-z])"
    r"(?:execute[_ ]?tool|tool[_ ]?calls?|tool[_ ]?use|function[_ ]?calls?|tools/call)"
    r"(?:$|[^a-z])"
)
_ID_KEYS = frozenset({"id", "callid", "toolcallid", "tooluseid", "functioncallid", "toolid", "gentoolcallid"})
_NAME_KEYS = frozenset({"name", "toolname", "functionname", "gentoolname"})
_INDEX = re.compile(r"(?<=\.)\d+(?=\.|$)")
_SPAN, _ATTRIBUTE, _EVENT, _LOG = "span", "attribute", "span_event", "log_record"
_EXAMPLES = 5  # ids kept per unread shape (explain prints them; the count is exact)
# isinstance's types as tuples: `dict | list` in a loop builds a new union at every test, and the
# walks below test every value of every history.
_STRUCTURED = (dict, list)
_NESTED = (dict, list, str)
_SCALAR = (str, int)


@lru_cache(maxsize=8192)  # keys repeat across every span and history (bounded: producers name keys)
def _token(segment: str) -> str:
    return segment.replace("_", "").replace("-", "").replace(" ", "").lower()


@lru_cache(maxsize=8192)
def _says_tool(segment: str) -> bool:
    return _token(segment) in _TOOL_TOKENS


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


class _Item(NamedTuple):
    shape: str
    source: str
    at: str  # span or record id
    ids: frozenset[str]
    names: frozenset[str]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


_UNITS = {_SPAN: "span", _ATTRIBUTE: "span", _EVENT: "span event", _LOG: "log record"}


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


# ---- finding tool-call items in attributes and JSON -------------------------------------------------


# Text that may name a tool call (a key or a `type`): only such text is parsed at all — histories
# are the bulk of a trace's bytes, and most never name one.
_MENTIONS = re.compile(r"(?i)tool[_-]?(?:call|use|invocation)|function[_-]?call|execute[_-]?tool")


def _mentions(text: str) -> bool:
    """Whether `text` matches `_MENTIONS`. Every match holds "tool" or "funct", whose letters have
    no case folding beyond ASCII's (unlike i, s and k), so a match can only start where its lower
    case holds one: at a "funct", at a "tool", or 7–8 characters before a "tool" ("execute-tool").
    The pattern is tried there alone; its case-blind scan of every history's whole text was most of
    ingest's time (docs/decisions.md 373)."""
    low = text.lower()
    if "tool" not in low and "funct" not in low:
        return False
    if len(low) != len(text):  # lower case changed the length (İ): the indices do not line up
        return _MENTIONS.search(text) is not None
    match = _MENTIONS.match
    for stem, before in (("tool", (0, 7, 8)), ("funct", (0,))):
        at = low.find(stem)
        while at >= 0:
            if any(at >= b and match(text, at - b) for b in before):
                return True
            at = low.find(stem, at + 1)
    return False


# Attribute keys and short values repeat on every span of a trace and across traces (operation
# names, models, ids of a few kinds): each is looked at once. Bounded: 16,384 texts under
# `_CACHED` characters are at most a few MB.
_CACHED = 256
_remembered = lru_cache(maxsize=16384)(_mentions)


def _short_mentions(text: str) -> bool:
    return _remembered(text) if len(text) < _CACHED else _mentions(text)


def _json_value(value: Any) -> Any:
    """A structured value, or JSON text (else a Python literal's repr) that mentions tools, parsed."""
    if isinstance(value, str) and value[:1] in ("[", "{") and _mentions(value):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return python_literal(value)
    return value if isinstance(value, _STRUCTURED) else None


# A repr that is not a literal (`ChatCompletionMessageFunctionToolCall(id='call_1', …)`): its
# ids and tool names are picked out by pattern, only to tell whether the calls it shows were read.
_REPR_CALL = re.compile(r"(?i)(?:tool_?calls?|tool_?use|function_?call)\w*\(|tool_calls=\[")
_REPR_ID = re.compile(r"""\b(?:id|call_id|tool_call_id|toolUseId)=['"]([^'"]{1,200})['"]""")
_REPR_NAME = re.compile(r"""\bname=['"]([^'"]{1,200})['"]""")


def _repr_item(value: Any) -> tuple[set[str], set[str]] | None:
    """(ids, names) a non-literal repr showing tool calls names, or None when it shows none."""
    if not isinstance(value, str) or not _REPR_CALL.search(value):
        return None
    return set(_REPR_ID.findall(value)), set(_REPR_NAME.findall(value))


def _ids_names(value: Any, ids: set[str], names: set[str], depth: int = 0) -> None:
    """Every id- or name-like string inside one call item (a dict, list, or JSON text)."""
    if depth > 6:
        return
    if isinstance(value, str):
        value = _json_value(value)
    if isinstance(value, dict):
        for key, child in value.items():
            token = _token(str(key))
            if isinstance(child, _SCALAR) and not isinstance(child, bool) and str(child):
                if token in _ID_KEYS:
                    ids.add(str(child))
                elif token in _NAME_KEYS:
                    names.add(str(child))
            elif isinstance(child, _NESTED):
                _ids_names(child, ids, names, depth + 1)
    elif isinstance(value, list):
        for child in value:
            _ids_names(child, ids, names, depth + 1)


def _json_items(value: Any, path: str, out: list[tuple[str, Any]], depth: int = 0) -> None:
    """(shape, item) for every call item inside a JSON value: the value under a tool key (each
    element when a list), or an object whose `type` names a tool call."""
    if depth > 12:
        return
    if isinstance(value, dict):
        kind = value.get("type")
        if isinstance(kind, str) and _says_tool(kind):
            out.append((f"{path}{{type: {kind}}}", value))
            return
        for key, child in value.items():
            if _says_tool(key if isinstance(key, str) else str(key)):
                for one in child if isinstance(child, list) else [child]:
                    if one not in (None, "", [], {}):
                        out.append((f"{path}.{key}" if path else str(key), one))
            elif isinstance(child, _STRUCTURED):
                _json_items(child, f"{path}.{key}" if path else str(key), out, depth + 1)
            elif isinstance(child, str) and child[:1] in ("[", "{"):
                parsed = _json_value(child)
                if parsed is not None:
                    _json_items(parsed, f"{path}.{key}" if path else str(key), out, depth + 1)
    elif isinstance(value, list):
        for child in value:
            _json_items(child, f"{path}[]", out, depth + 1)


def _walk(value: Any) -> list[_Found]:
    """The call items inside one parsed JSON value, each with the ids and names it holds."""
    found: list[tuple[str, Any]] = []
    _json_items(value, "", found)
    out = []
    for path, item in found:
        ids: set[str] = set()
        names: set[str] = set()
        _ids_names(item, ids, names)
        out.append(_Found(path, frozenset(ids), frozenset(names)))
    return out


class _Found(NamedTuple):
    path: str
    ids: frozenset[str]
    names: frozenset[str]


class _Seen(NamedTuple):
    """What one attribute text holds: whether it mentions a tool call, and its call items when it
    is JSON text (else a Python literal) that does — None when it is neither (`_json_value`)."""

    mentions: bool
    found: list[_Found] | None
    extendable: bool  # a JSON list ending in "]": a longer text repeating it reuses `found`


_JSON_SPACE = " \t\n\r"


class _Texts:
    """The attribute texts of one trace, each looked at once.

    A chat span's history repeats the previous chat span's history and adds the new turn, so
    reading each in full is quadratic in the turns; it was most of the extraction stage. A text
    seen before (the same tool definitions on every chat span) is answered from memory, and a JSON
    list that extends the list last seen under the same key — its text is that list's text without
    the closing `]`, then `,` and more elements — is read as that list's items followed by the new
    elements' items. That is exact: items are found element by element (a list's path is `[]`
    whatever the index), the repeated elements are the same text, and the new elements, parsed on
    their own as a list, parse as they do inside the whole (each is complete, and the whole is
    valid exactly when the tail list is valid and not empty). A mention in the earlier text is one
    in the longer text, so the longer one mentions a tool call too. Anything else is read afresh.
    """

    def __init__(self) -> None:
        self._seen: dict[str, _Seen] = {}
        self._last: dict[str, str] = {}  # key → the last extendable list text read under it

    def look(self, key: str, value: str) -> _Seen:
        if len(value) < _CACHED:
            if value[:1] not in ("[", "{") or not _short_mentions(value):
                return _Seen(_short_mentions(value), None, False)
            return _fresh(value)
        seen = self._seen.get(value)
        if seen is None:
            seen = self._extend(key, value) or _fresh(value)
            self._seen[value] = seen
        if seen.extendable:
            self._last[key] = value
        return seen

    def _extend(self, key: str, value: str) -> _Seen | None:
        before = self._last.get(key)
        if before is None or len(value) <= len(before):
            return None
        head = len(before) - 1  # without its closing "]"
        if not value.startswith(before[:head]):
            return None
        rest = value[head:].lstrip(_JSON_SPACE)
        if rest[:1] != ",":
            return None
        try:
            tail = orjson.loads("[" + rest[1:])
        except orjson.JSONDecodeError:
            return None
        if not isinstance(tail, list) or not tail:
            return None
        found = self._seen[before].found
        assert found is not None  # an extendable text was parsed
        return _Seen(True, found + _walk(tail), value.endswith("]"))


def _fresh(value: str) -> _Seen:
    """`_Seen` of one text read on its own (what `_json_value` reads of it)."""
    if value[:1] not in ("[", "{"):
        return _Seen(_mentions(value), None, False)
    if not _mentions(value):
        return _Seen(False, None, False)
    try:
        parsed = orjson.loads(value)
    except orjson.JSONDecodeError:
        literal = python_literal(value)
        return _Seen(True, None if literal is None else _walk(literal), False)
    extendable = isinstance(parsed, list) and value.endswith("]")  # not empty: it mentions a call
    return _Seen(True, _walk(parsed), extendable)


def _flat_items(attrs: dict[str, Any], label: str, source: str, at: str, texts: _Texts) -> Iterator[_Item]:
    """Call items in a flat attribute map: dotted keys grouped by the tool segment (and the index
    after it: `gen_ai.completion.0.function_call.name` and `.arguments` are one item), and JSON
    values holding call items."""
    groups: dict[str, dict[str, Any]] = {}
    for key, value in attrs.items():
        short = isinstance(value, str) and len(value) < _CACHED
        if short and not _remembered(value) and not _short_mentions(key):
            continue  # most attributes: a short text and a key naming no tool call (what `look` says)
        seen = texts.look(label + key, value) if isinstance(value, str) else None
        if seen is not None and not seen.mentions and not _short_mentions(key):
            continue  # names no tool call, as key or as text: nothing to look at
        grouped = _group_of(key)
        if grouped is not None:
            groups.setdefault(grouped[0], {})[grouped[1]] = value
            continue
        structured = isinstance(value, _STRUCTURED)
        found = seen.found if seen is not None else (_walk(value) if structured else None)
        if found is None:
            shown = _repr_item(value)
            if shown is not None:
                yield _Item(
                    f"{label}{_shape(key)} (Python repr)",
                    source,
                    at,
                    frozenset(shown[0]),
                    frozenset(shown[1]),
                )
            continue
        for one in found:
            yield _Item(f"{label}{_shape(key)} → {one.path}", source, at, one.ids, one.names)
    for group, fields in groups.items():
        if all(v in (None, "", [], {}) for v in fields.values()):
            continue
        ids = set()
        names = set()
        for field, value in fields.items():
            token = _token(field.rsplit(".", 1)[-1])
            if isinstance(value, _SCALAR) and not isinstance(value, bool) and token in _ID_KEYS:
                ids.add(str(value))
            elif isinstance(value, str) and token in _NAME_KEYS:
                names.add(value)
            else:
                _ids_names(value, ids, names)
        yield _Item(f"{label}{_shape(group)}", source, at, frozenset(ids), frozenset(names))


@lru_cache(maxsize=8192)  # keys repeat on every span
def _group_of(key: str) -> tuple[str, str] | None:
    """(group, field) of a dotted key with a tool segment: the key up to the segment (and the
    index after it), and the rest ("value" when none); None when no segment says tool."""
    parts = key.split(".")
    hit = next((i for i, p in enumerate(parts) if _says_tool(p)), None)
    if hit is None:
        return None
    end = hit + 2 if hit + 1 < len(parts) and parts[hit + 1].isdigit() else hit + 1
    return ".".join(parts[:end]), ".".join(parts[end:]) or "value"


@lru_cache(maxsize=8192)  # shapes repeat on every span
def _shape(key: str) -> str:
    return _INDEX.sub("N", key)


def _span_items(span: SpanView, texts: _Texts) -> Iterator[_Item]:
    yield from _flat_items(span.attributes, "", _ATTRIBUTE, span.span_id, texts)
    for event in span.events:
        if not isinstance(event, dict):
            continue
        name = str(event.get("name") or "")
        attrs = event.get("attributes")
        attrs = attrs if isinstance(attrs, dict) else {}
        if _says_tool(name.rsplit(".", 1)[-1]) or any(_says_tool(p) for p in name.split(".")):
            ids: set[str] = set()
            names: set[str] = set()
            _ids_names(attrs, ids, names)
            if ids or names:
                yield _Item(f"event {name}", _EVENT, span.span_id, frozenset(ids), frozenset(names))
            continue
        yield from _flat_items(attrs, f"event {name}: ", _EVENT, span.span_id, texts)


def _log_items(record: LogView, texts: _Texts) -> Iterator[_Item]:
    label = f"log record {record.event_name or record.attributes.get(sc.EVENT_NAME) or ''}: ".replace(
        " : ", ": "
    )
    yield from _flat_items(record.attributes, label, _LOG, record.record_id, texts)
    body = record.body if isinstance(record.body, _STRUCTURED) else _json_value(record.body)
    if body is not None:
        found: list[tuple[str, Any]] = []
        _json_items(body, "body", found)
        for path, item in found:
            ids: set[str] = set()
            names: set[str] = set()
            _ids_names(item, ids, names)
            yield _Item(f"{label}{path}", _LOG, record.record_id, frozenset(ids), frozenset(names))


# ---- the reading of one trace -----------------------------------------------------------------------


def _read(item: _Item, call_ids: set[str], call_names: set[str]) -> bool:
    """Whether an extracted call accounts for the item: by id when it names one, else by tool."""
    if item.ids:
        return not item.ids.isdisjoint(call_ids)
    if item.names:
        return not item.names.isdisjoint(call_names)
    return True  # identifies nothing: cannot be told apart from what was read


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
    items: list[_Item] = []
    call_ids = {c.call_id for c in calls if c.call_id}
    call_names = {c.tool_name for c in calls if c.tool_name}
    call_spans = {c.span_id for c in calls if c.span_id}
    unclaimed: list[SpanView] = []  # tool-looking spans no convention claimed
    texts = _Texts()
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
                execution = convention.execution(span)
                if (execution is None or not execution.name) and span.span_id not in call_spans:
                    items.append(
                        _Item(f"{span.name} (no tool name)", _SPAN, span.span_id, frozenset(), frozenset())
                    )
        elif _tool_like(span):
            tool_spans[span.span_id] = span
            unclaimed.append(span)
        items.extend(_span_items(span, texts))
    for span in unclaimed:
        if span.span_id in call_spans or _wraps_read(span, tool_spans, call_spans):
            continue
        ids: set[str] = set()
        # the semantic-convention span name is `execute_tool {tool}`: a word of it may be the tool
        names: set[str] = set(re.split(r"[\s/]+", span.name or "")) - {""}
        _ids_names(span.attributes, ids, names)
        items.append(_Item(_shape(span.name), _SPAN, span.span_id, frozenset(ids), frozenset(names)))
    for record in {r.record_id: r for r in logs}.values():
        if isinstance(record.attributes, dict) and record.span_id not in skipped:
            items.extend(_log_items(record, texts))
    unread: dict[tuple[str, str], list[str]] = {}
    for item in items:
        # a tool span that identifies nothing cannot be matched to a call: it is unread
        identified = item.source != _SPAN or bool(item.ids or item.names)
        if not identified or not _read(item, call_ids, call_names):
            unread.setdefault((item.shape, item.source), []).append(item.at)
    rows = [
        Unread(shape, source, len(at), tuple(dict.fromkeys(at))[:_EXAMPLES])
        for (shape, source), at in sorted(unread.items(), key=lambda kv: (kv[0][1] != _SPAN, kv[0]))
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
