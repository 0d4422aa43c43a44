"""Finding tool-call items in a trace's attributes, span events and log records, convention-blind:
the search of the reading pass (`extract.reading`), which keeps only the items no extracted call
accounts for.

An item is what *says* tool call: a flat dotted key with a tool segment (`gen_ai.completion.0.
tool_calls.0.id`, grouped by the segment and the index after it), a value under a tool key inside
JSON (or a Python literal's repr), a JSON object whose `type` names a tool call, a span event
named for one, or a repr that shows one (`ToolCall(id='call_1', …)`). Each carries the ids and
tool names it holds, and a call accounts for it by id when it names one, else by tool name
(`Calls.read`); one that names neither identifies nothing and counts as read.

Most of a trace's bytes are chat histories that repeat the previous request's, so each text is
looked at once (`Texts`), and whether its items were read is decided once per text, not once per
span that repeats it: the search of a trace is linear in its bytes, and a span whose every item
was read costs a lookup.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache
from typing import Any, NamedTuple

import orjson

from traceladder.extract.conventions.attribute_values import python_literal
from traceladder.extract.conventions.views import LogView, SpanView
from traceladder.instrumentation import semconv as sc

# A key segment (or a JSON object's `type`) that names a tool call, case and separators aside.
_TOOL_TOKENS = frozenset(
    {"toolcall", "toolcalls", "tooluse", "tooluses", "functioncall", "functioncalls", "toolinvocation",
     "toolinvocations", "executetool"}
)  # fmt: skip
_ID_KEYS = frozenset({"id", "callid", "toolcallid", "tooluseid", "functioncallid", "toolid", "gentoolcallid"})
_NAME_KEYS = frozenset({"name", "toolname", "functionname", "gentoolname"})
_INDEX = re.compile(r"(?<=\.)\d+(?=\.|$)")
# Where an item was found (`Item.source`).
SPAN, ATTRIBUTE, EVENT, LOG = "span", "attribute", "span_event", "log_record"
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


class Item(NamedTuple):
    shape: str
    source: str  # SPAN | ATTRIBUTE | EVENT | LOG
    at: str  # span or record id
    ids: frozenset[str]
    names: frozenset[str]


class Calls(NamedTuple):
    """The call ids and tool names of a trace's extracted calls: what accounts for an item."""

    ids: set[str]
    names: set[str]

    def read(self, ids: frozenset[str] | set[str], names: frozenset[str] | set[str]) -> bool:
        """Whether an extracted call accounts for an item: by id when it names one, else by tool;
        an item naming neither cannot be told apart from what was read."""
        if ids:
            return not self.ids.isdisjoint(ids)
        if names:
            return not self.names.isdisjoint(names)
        return True


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


def ids_names(value: Any, ids: set[str], names: set[str], depth: int = 0) -> None:
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
                ids_names(child, ids, names, depth + 1)
    elif isinstance(value, list):
        for child in value:
            ids_names(child, ids, names, depth + 1)


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
        ids_names(item, ids, names)
        out.append(_Found(path, frozenset(ids), frozenset(names)))
    return out


class _Found(NamedTuple):
    path: str
    ids: frozenset[str]
    names: frozenset[str]


class _Seen(NamedTuple):
    """What one attribute text holds: whether it mentions a tool call, and — when it is JSON text
    (else a Python literal) that does — its call items no extracted call accounts for (None when
    it is neither, `_json_value`)."""

    mentions: bool
    unread: list[_Found] | None
    extendable: bool  # a JSON list ending in "]": a longer text repeating it reuses `unread`


_JSON_SPACE = " \t\n\r"
# The readings of a text that is not parsed, shared: most texts look at are one of these.
_SAYS = _Seen(True, None, False)
_SILENT = _Seen(False, None, False)


class Texts:
    """The attribute texts of one trace, each looked at once, against the trace's calls.

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

    Whether an item was read depends only on its ids and names and the trace's calls, so a text
    keeps only its unread items, decided once: a history whose items were all read — the usual
    case — yields nothing however many spans repeat it, where each repetition used to build and
    test every item again.
    """

    def __init__(self, calls: Calls) -> None:
        self.calls = calls
        self._seen: dict[str, _Seen] = {}
        # key → (text, its reading): the last long text read under it, and the last extendable one
        self._prev: dict[str, tuple[str, _Seen]] = {}
        self._last: dict[str, tuple[str, _Seen]] = {}

    def unread(self, found: list[_Found]) -> list[_Found]:
        """The items of `found` no extracted call accounts for, in order."""
        read = self.calls.read
        return [one for one in found if not read(one.ids, one.names)]

    def look(self, key: str, value: str) -> _Seen:
        if len(value) < _CACHED:
            if value[:1] not in ("[", "{") or not _short_mentions(value):
                return _SAYS if _short_mentions(value) else _SILENT
            return self._fresh(value, mentioned=True)
        # The text under the same key before (tool definitions repeat on every chat span), then
        # the list it extends (a history), then any text seen: in that order because comparing
        # two texts stops at their lengths or their first difference, where a dictionary lookup
        # hashes the whole text first (a new string each span) — a third of the pass, measured.
        prev = self._prev.get(key)
        seen = prev[1] if prev is not None and prev[0] == value else None
        if seen is None:
            seen = self._extend(key, value)
        if seen is None:
            seen = self._seen.get(value)
            if seen is None:
                seen = self._seen[value] = self._fresh(value)
        self._prev[key] = (value, seen)
        if seen.extendable:
            self._last[key] = (value, seen)
        return seen

    def _extend(self, key: str, value: str) -> _Seen | None:
        last = self._last.get(key)
        if last is None or len(value) <= len(last[0]):
            return None
        before, seen = last
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
        assert seen.unread is not None  # an extendable text was parsed
        return _Seen(True, seen.unread + self.unread(_walk(tail)), value.endswith("]"))

    def _fresh(self, value: str, mentioned: bool = False) -> _Seen:
        """`_Seen` of one text read on its own (what `_json_value` reads of it); `mentioned`: the
        caller found that it mentions a tool call already."""
        if value[:1] not in ("[", "{"):
            return _SAYS if mentioned or _mentions(value) else _SILENT
        if not (mentioned or _mentions(value)):
            return _SILENT
        try:
            parsed = orjson.loads(value)
        except orjson.JSONDecodeError:
            literal = python_literal(value)
            return _Seen(True, None if literal is None else self.unread(_walk(literal)), False)
        extendable = isinstance(parsed, list) and value.endswith("]")  # not empty: it mentions a call
        return _Seen(True, self.unread(_walk(parsed)), extendable)


def _flat_items(attrs: dict[str, Any], label: str, source: str, at: str, texts: Texts) -> Iterator[Item]:
    """Unread call items in a flat attribute map: dotted keys grouped by the tool segment (and the
    index after it: `gen_ai.completion.0.function_call.name` and `.arguments` are one item), and
    JSON values holding call items."""
    groups: dict[str, dict[str, Any]] = {}
    read = texts.calls.read
    remembered = _remembered
    for key, value in attrs.items():
        unread: list[_Found] | None = None
        if isinstance(value, str):
            key_says = remembered(key) if len(key) < _CACHED else _mentions(key)
            if len(value) < _CACHED and not key_says and not remembered(value):
                continue  # most attributes: a short text and a key naming no tool call (what `look` says)
            seen = texts.look(label + key, value)
            if not key_says and not seen.mentions:
                continue  # names no tool call, as key or as text: nothing to look at
            unread = seen.unread
        elif not isinstance(value, _STRUCTURED) and _group_of(key) is None:
            continue  # a number, boolean or null under a key with no tool segment: not an item
        grouped = _group_of(key)
        if grouped is not None:
            groups.setdefault(grouped[0], {})[grouped[1]] = value
            continue
        if isinstance(value, _STRUCTURED):
            unread = texts.unread(_walk(value))
        if unread is None:
            shown = _repr_item(value)
            if shown is not None and not read(shown[0], shown[1]):
                yield Item(f"{label}{shape(key)} (Python repr)", source, at, frozenset(shown[0]),
                           frozenset(shown[1]))  # fmt: skip
            continue
        for one in unread:
            yield Item(f"{label}{shape(key)} → {one.path}", source, at, one.ids, one.names)
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
                ids_names(value, ids, names)
        if not read(ids, names):
            yield Item(f"{label}{shape(group)}", source, at, frozenset(ids), frozenset(names))


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
def shape(key: str) -> str:
    """A key or span name as an unread shape: its numeric segments (list indexes) as `N`."""
    return _INDEX.sub("N", key)


def span_items(span: SpanView, texts: Texts) -> Iterator[Item]:
    """The call items in a span's attributes and events that no extracted call accounts for."""
    yield from _flat_items(span.attributes, "", ATTRIBUTE, span.span_id, texts)
    for event in span.events:
        if not isinstance(event, dict):
            continue
        name = str(event.get("name") or "")
        attrs = event.get("attributes")
        attrs = attrs if isinstance(attrs, dict) else {}
        if _says_tool(name.rsplit(".", 1)[-1]) or any(_says_tool(p) for p in name.split(".")):
            ids: set[str] = set()
            names: set[str] = set()
            ids_names(attrs, ids, names)
            if not texts.calls.read(ids, names):  # naming neither, it identifies nothing: read
                yield Item(f"event {name}", EVENT, span.span_id, frozenset(ids), frozenset(names))
            continue
        yield from _flat_items(attrs, f"event {name}: ", EVENT, span.span_id, texts)


def log_items(record: LogView, texts: Texts) -> Iterator[Item]:
    """The call items in a log record's attributes and body that no extracted call accounts for."""
    label = f"log record {record.event_name or record.attributes.get(sc.EVENT_NAME) or ''}: ".replace(
        " : ", ": "
    )
    yield from _flat_items(record.attributes, label, LOG, record.record_id, texts)
    body = record.body if isinstance(record.body, _STRUCTURED) else _json_value(record.body)
    if body is not None:
        found: list[tuple[str, Any]] = []
        _json_items(body, "body", found)
        for path, item in found:
            ids: set[str] = set()
            names: set[str] = set()
            ids_names(item, ids, names)
            if not texts.calls.read(ids, names):
                yield Item(f"{label}{path}", LOG, record.record_id, frozenset(ids), frozenset(names))


__all__ = ["ATTRIBUTE", "EVENT", "LOG", "SPAN", "Calls", "Item", "Texts", "ids_names", "log_items", "shape",
           "span_items"]  # fmt: skip
