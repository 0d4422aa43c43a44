"""Value helpers shared by the convention readers: lenient JSON, text rendering, comparison keys.

Everything here is total: any value a producer can send (or a caller can build) returns a result,
never raises. Structured values that cannot be serialised (non-string keys, nesting deeper than
orjson's limit) render as None rather than failing the trace.
"""

from __future__ import annotations

import ast
import json
from typing import Any, Final

import orjson


class _Absent:
    """Marks "this source did not record the value" (distinct from a recorded None or "")."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Final = _Absent()

# Argument ranks: lower means closer to the text the model emitted (see docs/conventions.md).
ARGS_OPENINFERENCE: Final = 1  # llm.*_messages.*.tool_call.function.arguments string
ARGS_OPENLLMETRY_FLAT: Final = 2  # gen_ai.completion/prompt.*.tool_calls.*.arguments string
ARGS_EVENT: Final = 3  # gen_ai.choice / gen_ai.assistant.message function.arguments string
ARGS_TOOL_SPAN: Final = 4  # gen_ai.tool.call.arguments / OpenInference input.value string
ARGS_PART_STRING: Final = 5  # GenAI message part "arguments" string (raw invalid JSON)
ARGS_STRUCTURED: Final = 6  # a structured value, re-serialised: not byte-exact
ARGS_NONE: Final = 99


def loads(value: Any, default: Any = None) -> Any:
    """A JSON string parsed (orjson), else `default`; non-strings are returned unchanged."""
    if not isinstance(value, str):
        return value
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError:
        return default


MAX_LITERAL = 1 << 20  # a repr longer than this is not parsed (literal_eval's cost grows with it)


def python_literal(value: Any) -> Any:
    """A Python literal an instrumentation wrote with repr() (`{'id': 'call_1', …}`), parsed with
    `ast.literal_eval` — literals only, nothing runs — else None. A repr that is not a literal
    (`ToolCall(id='call_1', …)`) is None: what it holds is reported as unread, never guessed."""
    if not isinstance(value, str) or value[:1] not in ("{", "[") or len(value) > MAX_LITERAL:
        return None
    try:
        return ast.literal_eval(value)
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        return None


def text(value: Any) -> str | None:
    """Strings stay exactly as recorded; structured values become compact JSON text (as
    `storage.normalize` renders tool columns); None and unserialisable values give None."""
    if value is None or isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return None


def compact(value: Any) -> str | None:
    """Structured → compact JSON text via orjson (10x the stdlib encoder; used for tool schemas,
    never for call data, whose text must match `storage.normalize`); strings stay as they are."""
    if value is None or isinstance(value, str):
        return value
    try:
        return orjson.dumps(value).decode()
    except (TypeError, ValueError):  # non-string keys, nesting deeper than orjson allows
        return text(value)


def name_text(value: Any) -> str | None:
    """A tool name or call id: strings as is, scalars as their JSON text, containers rejected."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return text(value)
    return None


def args_text(value: Any) -> str | None:
    """Argument text: a string exactly; a structured value re-serialised the way Python's
    `json.dumps` does by default (what most producers' models emit) — not byte-exact."""
    if value is ABSENT or value is None:
        return None
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    except (TypeError, ValueError, RecursionError):
        return None


def args_rank_of(value: Any, string_rank: int) -> int:
    """The rank of an argument value: `string_rank` for text, structured for anything else."""
    if value is ABSENT or value is None:
        return ARGS_NONE
    return string_rank if isinstance(value, str) else ARGS_STRUCTURED


def canonical(value: Any) -> str | None:
    """A comparison key for arguments: equal for the raw text and its parsed form, so a call in a
    response (string) matches its copy in history (object). None when incomparable."""
    if value is ABSENT or value is None:
        return None
    if isinstance(value, str):
        try:
            value = orjson.loads(value)
        except orjson.JSONDecodeError:
            return "r" + value
    try:
        return "j" + orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    except (TypeError, ValueError):
        return None


def index(segment: str) -> int | None:
    """A flattened-attribute list index ("3"), or None for anything else."""
    if segment.isascii() and segment.isdigit() and len(segment) < 7:
        return int(segment)
    return None


def as_dict(value: Any) -> dict[str, Any] | None:
    """A dict, or a JSON string of one (some producers nest JSON text inside structured values)."""
    value = loads(value) if isinstance(value, str) else value
    return value if isinstance(value, dict) else None


def as_list(value: Any) -> list[Any] | None:
    """A list, or a JSON string of one."""
    value = loads(value) if isinstance(value, str) else value
    return value if isinstance(value, list) else None


def indexed_fields(attrs: dict[str, Any], prefix: str) -> dict[int, dict[str, Any]]:
    """Flattened `prefix{i}.field` attributes → {i: {field: value}}. Scans the keys: histories may
    have gaps after redaction."""
    found: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        if key.startswith(prefix):
            position, _, field = key[len(prefix) :].partition(".")
            i = index(position)
            if i is not None:
                found.setdefault(i, {})[field] = value
    return found


def flat_messages(attrs: dict[str, Any], prefix: str, output: bool) -> list[tuple[str | None, str | None]]:
    """Flattened `prefix{i}.[message.]role/content` attributes → (role, text) in index order
    (OpenInference's `message.` level dropped, so OpenLLMetry's flat form reads the same way); an
    output message without a role is the assistant's."""
    found = indexed_fields(attrs, prefix)
    out = []
    for i in sorted(found):
        fields = {k.removeprefix("message."): v for k, v in found[i].items()}
        role = text(fields.get("role")) or ("assistant" if output else None)
        out.append((role, text(fields.get("content"))))
    return out
