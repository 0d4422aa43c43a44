"""Where rung 1's schemas come from for a trace with no case: the tool definitions the trace
itself captured (what the model was actually offered), or a file of OpenAI-format definitions the
user names with `--tools`.

Definitions captured from someone else's traces, and a `--tools` file, are untrusted input: each
must be a valid JSON Schema (checked once per distinct set of definitions, then cached), they are
never compiled into code (no fast path), no `$ref` of theirs is ever fetched, and they are checked
by a validator whose regular expressions run in linear time (`evaluate.rungs.untrusted_schema`, the one
owner of that). A captured set that is not usable makes rung 1 `not_evaluated` with the reason — a
broken definition is not a failing call; a `--tools` file that is not usable is one line, exit 2.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from traceladder.errors import UserError
from traceladder.evaluate.rungs.schema import SchemaRegistry
from traceladder.evaluate.rungs.untrusted_schema import schema_problem
from traceladder.extract.conventions.gemini_schema import json_schema as gemini_json_schema
from traceladder.extract.conventions.sightings import parameters_of
from traceladder.files import LIMITS, read_input
from traceladder.store.readers import Definitions

_EMPTY_OBJECT: dict[str, Any] = {"type": "object"}
_CACHE_LIMIT = 10_000
_cache: dict[str, SchemaRegistry | str] = {}  # by the set's digest


def _usable(name: str, schema: Any) -> str | None:
    """Why a parameters schema cannot judge calls, or None when it can."""
    if not isinstance(schema, dict):
        return f"the definition of {name} has parameters that are not a JSON object"
    problem = schema_problem(schema)
    return f"the definition of {name} {problem}" if problem else None


def trace_registry(key: str, definitions: Definitions) -> SchemaRegistry | str:
    """The compiled schemas of one set of captured definitions (`key`: its digest), or the reason
    they are unusable. Cached: live traffic repeats the same few tool sets constantly."""
    hit = _cache.get(key)
    if hit is not None:
        return hit
    schemas: dict[str, Any] = {}
    unreadable: set[str] = set()
    problem: str | None = None
    for name, parameters, _offered in definitions:
        if parameters is None:  # defined, but no schema we can read: its calls are not checked
            unreadable.add(name)
            continue
        try:
            schema = json.loads(parameters)
        except (ValueError, RecursionError):
            problem = f"the definition of {name} has parameters that are not valid JSON"
            break
        problem = _usable(name, schema)
        if problem:
            break
        if name in schemas and schemas[name] != schema:
            problem = f"the trace defines {name} twice, differently"
            break
        schemas[name] = schema
    complete = any(offered for _, _, offered in definitions)
    result: SchemaRegistry | str = problem or SchemaRegistry(
        schemas, "trace" if complete else "trace (tool spans only)", trusted=False,
        unreadable=frozenset(unreadable), complete=complete,
    )  # fmt: skip
    if len(_cache) >= _CACHE_LIMIT:
        _cache.clear()
    _cache[key] = result
    return result


def _definitions(document: Any) -> Iterable[Mapping[str, Any]]:
    items = document.get("tools") if isinstance(document, dict) and "tools" in document else document
    if not isinstance(items, list):
        raise ValueError("expected a JSON array of tool definitions (or an object with a `tools` array)")
    for index, item in enumerate(items):
        declarations = _gemini_declarations(item)
        if declarations is not None:
            yield from _gemini_tools(index, declarations)
            continue
        # OpenAI's {"function": {...}}, Bedrock Converse's {"toolSpec": {...}}, or the bare object
        tool = item.get("function", item.get("toolSpec", item)) if isinstance(item, dict) else None
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            raise ValueError(f"item {index} is not an OpenAI tool definition with a function name")
        yield tool


def _gemini_declarations(item: Any) -> Any:
    """A Gemini tool's `functionDeclarations` (REST) / `function_declarations` (SDK), else None."""
    if not isinstance(item, dict):
        return None
    return item.get("functionDeclarations", item.get("function_declarations"))


def _gemini_tools(index: int, declarations: Any) -> Iterator[Mapping[str, Any]]:
    """Gemini's declarations as bare {name, parameters} objects: a JSON Schema given as
    `parametersJsonSchema` is taken as it is; Gemini's own `parameters` (an OpenAPI subset whose
    types are spelled `OBJECT`, `STRING`, … and may be `nullable`) becomes the JSON Schema it means."""
    if not isinstance(declarations, list):
        raise ValueError(f"item {index}: functionDeclarations is not a list")
    for declaration in declarations:
        if not isinstance(declaration, dict) or not isinstance(declaration.get("name"), str):
            raise ValueError(f"item {index} has a function declaration without a name")
        tool = {k: v for k, v in declaration.items() if k not in _GEMINI_SCHEMA_KEYS}
        json_schema = next((declaration[k] for k in _GEMINI_JSON_SCHEMA_KEYS if k in declaration), None)
        if json_schema is not None:
            tool["parameters"] = json_schema
        elif "parameters" in declaration:
            tool["parameters"] = gemini_json_schema(declaration["parameters"])
        yield tool


_GEMINI_JSON_SCHEMA_KEYS = ("parametersJsonSchema", "parameters_json_schema")
_GEMINI_SCHEMA_KEYS = (*_GEMINI_JSON_SCHEMA_KEYS, "parameters")


def read_tools_file(path: Path) -> list[Mapping[str, Any]]:
    """`--tools FILE`: OpenAI-format tool definitions (`[{"type": "function", "function": {...}}]`,
    an object with a `tools` array, or bare `{"name", "parameters"}` objects, or Bedrock Converse's
    `toolConfig` (`{"tools": [{"toolSpec": {...}}]}`), or Gemini's `{"functionDeclarations": [...]}`
    tools (`_gemini_tools`); the schema may also be Anthropic's
    `input_schema`, MCP's `inputSchema` or Bedrock's `inputSchema.json`, never silently ignored),
    each function object checked (a usable schema; `parameters` defaults to any object). A file that cannot be
    read, or holds none, is a `UserError`."""
    try:
        document = json.loads(read_input(path, "--tools file", LIMITS["--tools file"]).decode("utf-8"))
        tools: list[Mapping[str, Any]] = []
        for tool in _definitions(document):
            found = parameters_of(dict(tool))  # OpenAI's, Anthropic's, MCP's or Bedrock's key
            schema = _EMPTY_OBJECT if found is None else found
            problem = _usable(tool["name"], schema)
            if problem:
                raise ValueError(problem)
            tools.append({**tool, "parameters": schema})
    except OSError as exc:
        raise UserError(f"--tools {path}: cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:  # includes JSON syntax errors, with their line and column
        raise UserError(f"--tools {path}: {exc}") from None
    if not tools:
        raise UserError(f"--tools {path}: no tool definitions")
    return tools


def load_tools_file(path: Path) -> SchemaRegistry:
    """`--tools FILE` as rung 1's schemas (`read_tools_file`)."""
    schemas = {tool["name"]: tool["parameters"] for tool in read_tools_file(path)}
    return SchemaRegistry(schemas, f"tools:{path.name}", trusted=False)
