"""Reading an invariant policy file (TOML) into a `PolicySet` — the I/O edge of the invariants rung.

The format is documented in docs/invariants.md. Everything wrong with a file is a `UserError`
whose message is `<path>:<line>: <what is wrong>`, and nothing that parses is ignored: an unknown
key, a wrong type, a negative limit, a bad regex, an empty glob and an empty section are all errors.

tomllib reports no positions for keys, so the line of a problem is found by scanning the text
(`locate`): the scanner follows TOML's table rules (headers, arrays of tables, dotted keys, values
spanning lines) and reports the line where the offending key — or the innermost enclosing key or
table header — is written. It only ever names a line whose key path encloses the problem, so it
can be imprecise (a bad item of a multi-line array is reported at the array's key) but not wrong.
"""

from __future__ import annotations

import difflib
import json
import math
import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from traceladder.errors import UserError
from traceladder.evaluate.rungs.policy import Confirmation, ParamRule, PolicySet
from traceladder.evaluate.rungs.safe_regex import python_refusal
from traceladder.files import LIMITS, read_input

Where = tuple[str | int, ...]  # a key path into the document; ints index arrays
SECTIONS = ("defaults", "service", "agent", "conversation")
KEYS = (
    "allowed_tools", "forbidden_tools", "max_turns", "max_tool_calls", "forbid_duplicate_calls",
    "max_tool_errors", "max_latency_ms", "confirm", "parameters",
)  # fmt: skip
# What [conversation] may check across a conversation's turns (docs/conversations.md): the checks
# over its calls taken together; limits of one trace (turns, latency, errors) stay per trace.
CONVERSATION_KEYS = (
    "allowed_tools", "forbidden_tools", "max_tool_calls", "forbid_duplicate_calls", "confirm", "parameters",
)  # fmt: skip


class _Problem(Exception):
    def __init__(self, where: Where, what: str) -> None:
        super().__init__(what)
        self.where, self.what = where, what


def load_policy(path: Path) -> PolicySet:
    """Read and validate the policy file at `path`."""
    data = read_input(path, "policy file", LIMITS["policy file"])
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise UserError(f"{path}:{line}: not UTF-8 text; save the policy file as UTF-8") from None
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(_syntax_error(path, text, exc)) from None
    try:
        return _policy_set(document, str(path))
    except _Problem as problem:
        at = locate(text, problem.where)
        raise UserError(f"{path}:{at}: {problem.what}" if at else f"{path}: {problem.what}") from None


def _syntax_error(path: Path, text: str, exc: tomllib.TOMLDecodeError) -> str:
    message = str(exc)
    found = re.search(r"\s*\(at line (\d+), column (\d+)\)$", message)
    if found:
        return f"{path}:{found[1]}: invalid TOML: {message[: found.start()]} (column {found[2]})"
    last = max(1, len(text.rstrip("\n").split("\n")))
    reason = re.sub(r"\s*\(at end of document\)$", "", message)
    return f"{path}:{last}: invalid TOML: {reason} at the end of the file"


def _policy_set(document: dict[str, Any], origin: str) -> PolicySet:
    for key in document:
        if key in KEYS:
            raise _Problem((key,), f'{key} is outside any section; put it under [defaults], [service."NAME"] '
                                   f'or [agent."NAME"]')  # fmt: skip
        if key not in SECTIONS:
            raise _Problem((key,), _unknown(key, "at the top level", SECTIONS))
    if not document:
        raise _Problem((), f"names no check; add a [defaults] section with one of: {', '.join(KEYS)}")
    defaults = _section(document["defaults"], ("defaults",)) if "defaults" in document else None
    conversation = (
        _section(document["conversation"], ("conversation",), CONVERSATION_KEYS)
        if "conversation" in document
        else None
    )
    return PolicySet(defaults, _named(document, "service"), _named(document, "agent"), origin, conversation)


def _named(document: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    tables = document.get(kind, {})
    if not isinstance(tables, dict) or (kind in document and not tables):
        raise _Problem((kind,), f'[{kind}] holds one section per {kind} name; write [{kind}."NAME"]')
    for name, table in tables.items():
        if not isinstance(table, dict):
            raise _Problem((kind, name), f'[{kind}] holds one section per {kind} name; put {name} under '
                                         f'[{kind}."NAME"]')  # fmt: skip
    return {name: _section(table, (kind, name)) for name, table in tables.items()}


def _label(where: Where) -> str:
    """A table's path as a header spells it: service."checkout".confirm."""
    return ".".join(
        json.dumps(k) if i == 1 and where[0] not in ("defaults", "conversation") else str(k)
        for i, k in enumerate(where)
    )


def _section(table: Any, where: Where, keys: tuple[str, ...] = KEYS) -> dict[str, Any]:
    label = _label(where)
    if not isinstance(table, dict):
        raise _Problem(where, f"{label} must be a table: write [{label}]")
    if not table:
        raise _Problem(where, f"[{label}] names no check; set one of: {', '.join(keys)}")
    settings = {}
    for key, value in table.items():
        if key not in keys:
            if key in KEYS:  # a per-trace check: say so, rather than "unknown"
                raise _Problem((*where, key), f"{key} is checked per trace, not across a conversation's "
                                              f"turns; put it under [defaults] (conversation checks: "
                                              f"{', '.join(keys)})")  # fmt: skip
            raise _Problem((*where, key), _unknown(key, f"in [{label}]", keys))
        settings[key] = _CHECKS[key](value, (*where, key))
    return settings


def _unknown(key: str, place: str, known: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(key, known, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"unknown key {key!r} {place}{hint} (known keys: {', '.join(known)})"


def _type_name(value: Any) -> str:
    names = {bool: "a boolean", str: "a string", int: "a whole number", float: "a number",
             list: "an array", dict: "a table"}  # fmt: skip
    return next((n for t, n in names.items() if isinstance(value, t)), type(value).__name__)


def _globs(value: Any, where: Where) -> tuple[str, ...]:
    key = where[-1]
    if not isinstance(value, list):
        raise _Problem(
            where, f'{key} must be an array of tool globs such as ["search_*"], not {_type_name(value)}'
        )
    for index, glob in enumerate(value):
        if not isinstance(glob, str):
            raise _Problem((*where, index), f"{key} item {index + 1} must be a tool glob (a string), "
                                            f"not {_type_name(glob)}")  # fmt: skip
        if not glob.strip():
            raise _Problem((*where, index), f"{key} item {index + 1} is an empty tool glob; "
                                            f'use a name or a pattern such as "delete_*"')  # fmt: skip
    return tuple(value)


def _count(value: Any, where: Where) -> int:
    key = where[-1]
    if isinstance(value, bool) or not isinstance(value, int):
        example = value.strip() if isinstance(value, str) and value.strip().isdigit() else 3
        shown = value if isinstance(value, float) else _type_name(value)
        raise _Problem(where, f"{key} must be a whole number, not {shown}; write e.g. {key} = {example}")
    if value < 0:
        raise _Problem(where, f"{key} must be 0 or more, not {value}")
    return value


def _flag(value: Any, where: Where) -> bool:
    if not isinstance(value, bool):
        raise _Problem(where, f"{where[-1]} must be true or false, not {_type_name(value)}")
    return value


def _milliseconds(value: Any, where: Where) -> float:
    key = where[-1]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _Problem(where, f"{key} must be a number of milliseconds, not {_type_name(value)}")
    if not math.isfinite(value) or value < 0:
        raise _Problem(where, f"{key} must be a finite number, 0 or more, not {value}")
    return float(value)


def _confirm(value: Any, where: Where) -> tuple[Confirmation, ...]:
    if not isinstance(value, list):
        raise _Problem(where, f'confirm must be an array of tables: write [[{_label(where)}]] with '
                              f'tool = "request_*" and by = ["confirm_action"]')  # fmt: skip
    rules = []
    for index, rule in enumerate(value):
        at = (*where, index)
        if not isinstance(rule, dict):
            raise _Problem(at, f'confirm item {index + 1} must be a table {{tool = "...", by = [...]}}')
        for key in rule:
            if key not in ("tool", "by"):
                raise _Problem((*at, key), _unknown(key, f"in confirm rule {index + 1}", ("tool", "by")))
        for key in ("tool", "by"):
            if key not in rule:
                raise _Problem(at, f"confirm rule {index + 1} has no {key}; it needs tool and by")
        tool, by = rule["tool"], rule["by"]
        if not isinstance(tool, str) or not tool.strip():
            raise _Problem((*at, "tool"), f"confirm rule {index + 1}: tool must be a non-empty tool glob")
        by_list = [by] if isinstance(by, str) else by
        if not isinstance(by_list, list) or not by_list:
            raise _Problem((*at, "by"), f"confirm rule {index + 1}: by must be a tool glob or a non-empty "
                                        f"array of them")  # fmt: skip
        rules.append(Confirmation(tool, _globs(by_list, (*at, "by"))))
    return tuple(rules)


def _parameters(value: Any, where: Where) -> tuple[ParamRule, ...]:
    if not isinstance(value, dict):
        raise _Problem(
            where, f'parameters must be a table of "TOOL_GLOB.PARAM" = "REGEX", not {_type_name(value)}'
        )
    rules = []
    stack: list[tuple[Where, Any]] = [((*where, k), v) for k, v in reversed(value.items())]
    while stack:  # dotted keys (request_refund.amount = …) arrive as nested tables: flatten them
        at, item = stack.pop()
        if isinstance(item, dict):
            stack.extend(((*at, k), v) for k, v in reversed(item.items()))
            continue
        key = ".".join(str(k) for k in at[len(where) :])
        tool, dot, param = key.rpartition(".")
        if not dot or not tool.strip() or not param.strip():
            raise _Problem(
                at, f'parameter rule {key!r} must be named "TOOL_GLOB.PARAM", e.g. "request_*.amount"'
            )
        if not isinstance(item, str):
            raise _Problem(at, f"parameter rule {key!r} must be a regex (a string), not {_type_name(item)}")
        try:
            pattern = re.compile(item)
        except re.error as exc:
            shown = f"'{item}'" if "'" not in item and "\n" not in item else json.dumps(item)
            raise _Problem(at, f"parameter rule {key!r} has an invalid regex {shown}: {exc}") from None
        # matched against arguments from traces: RE2 (linear time), never `re`'s backtracking
        why = python_refusal(item)
        if why is not None:
            raise _Problem(at, f"parameter rule {key!r} has a regex RE2 cannot run in linear time ({why})")
        rules.append(ParamRule(tool, param, pattern))
    return tuple(rules)


_CHECKS: dict[str, Callable[[Any, Where], Any]] = {
    "allowed_tools": _globs,
    "forbidden_tools": _globs,
    "max_turns": _count,
    "max_tool_calls": _count,
    "max_tool_errors": _count,
    "forbid_duplicate_calls": _flag,
    "max_latency_ms": _milliseconds,
    "confirm": _confirm,
    "parameters": _parameters,
}

_KEY = re.compile(
    r"""\s*((?:[A-Za-z0-9_-]+|"(?:[^"\\\n]|\\.)*"|'[^'\n]*')"""
    r"""(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"(?:[^"\\\n]|\\.)*"|'[^'\n]*'))*)\s*="""
)


def locate(text: str, where: Where) -> int | None:
    """The 1-based line where the value at `where` (or its innermost enclosing key or table) is
    written; None when no line encloses it. An empty `where` (the whole file) is line 1."""
    if not where:
        return 1
    lines = [line.rstrip("\r") for line in text.split("\n")]
    arrays: dict[Where, int] = {}  # array-of-tables path → how many elements so far
    table: Where = ()
    best, best_depth = None, 0

    def consider(path: Where, line: int) -> None:
        nonlocal best, best_depth
        if len(path) > best_depth and where[: len(path)] == path:
            best, best_depth = line, len(path)

    index = 0
    while index < len(lines):
        stripped = lines[index].strip()
        if stripped.startswith("["):
            header, is_array = _walk(stripped)
            resolved = _resolve(header, arrays)
            if is_array:
                arrays[resolved] = arrays.get(resolved, 0) + 1
                resolved = (*resolved, arrays[resolved] - 1)
            table = resolved
            consider(table, index + 1)
        elif stripped and not stripped.startswith("#"):
            found = _KEY.match(lines[index])
            if found:
                consider((*table, *_walk(found[1] + " = 0")[0]), index + 1)
            index = _value_end(lines, index)
        index += 1
    return best


def _walk(toml: str) -> tuple[Where, bool]:
    """The key path one header or key line defines, and whether it ends in an array of tables."""
    try:
        node: Any = tomllib.loads(toml)
    except tomllib.TOMLDecodeError:
        return (), False
    path: list[str] = []
    while isinstance(node, dict) and len(node) == 1:
        key, node = next(iter(node.items()))
        path.append(key)
    return tuple(path), isinstance(node, list)


def _resolve(path: Where, arrays: dict[Where, int]) -> Where:
    """A header's path with the current element of every enclosing array of tables spelled out."""
    out: list[str | int] = []
    for key in path[:-1]:
        out.append(key)
        if tuple(out) in arrays:
            out.append(arrays[tuple(out)] - 1)
    return (*out, *path[-1:])


def _value_end(lines: list[str], start: int) -> int:
    """The last line of the statement starting at `start`: the first line at which the text from
    `start` parses as TOML (a value spans lines only inside an array or a multi-line string)."""
    for end in range(start, len(lines)):
        try:
            tomllib.loads("\n".join(lines[start : end + 1]))
        except tomllib.TOMLDecodeError:
            continue
        return end
    return start
