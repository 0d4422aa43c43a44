"""Checks a domain's contract: tool schemas, fixture referential integrity, whitelist.

`validate_domain` returns every violation it finds (never stops at the first), so one run of
`traceladder domain validate` shows everything to fix.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from jsonschema import Draft202012Validator

from traceladder.evaluate.rungs.untrusted_schema import schema_problem
from traceladder.suite.domain.base import Domain

# The shape of an OpenAI "function" tool, as the Chat Completions API accepts it.
OPENAI_TOOL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["type", "function"],
    "additionalProperties": False,
    "properties": {
        "type": {"const": "function"},
        "function": {
            "type": "object",
            "required": ["name", "description", "parameters"],
            "additionalProperties": False,
            "properties": {
                "name": {"type": "string", "pattern": "^[a-zA-Z0-9_-]{1,64}$"},
                "description": {"type": "string", "minLength": 1},
                "parameters": {"type": "object", "required": ["type"]},
                "strict": {"type": "boolean"},
            },
        },
    },
}
_TOOL_SHAPE = Draft202012Validator(OPENAI_TOOL_SCHEMA)
# The shape a recorded definition must have: what the API accepts, description optional.
_RECORDED_FUNCTION = {**OPENAI_TOOL_SCHEMA["properties"]["function"], "required": ["name", "parameters"]}
_RECORDED_TOOL_SHAPE = Draft202012Validator(
    {**OPENAI_TOOL_SCHEMA, "properties": {**OPENAI_TOOL_SCHEMA["properties"], "function": _RECORDED_FUNCTION}}
)


def validate_domain(domain: Domain) -> list[str]:
    """Every violation of the tool, chain and whitelist contract, plus the domain's own checks
    (`Domain.extra_checks`), as readable one-line messages."""
    problems: list[str] = []
    seen: set[str] = set()
    shape = _TOOL_SHAPE if domain.strict_schemas else _RECORDED_TOOL_SHAPE
    for index, tool in enumerate(domain.tools):
        label = f"tools[{index}]"
        for err in shape.iter_errors(tool):
            where = "/".join(str(p) for p in err.absolute_path)
            problems.append(f"{label}: not a valid OpenAI function tool at {where!r}: {err.message}")
        fn = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(fn, dict):
            continue
        name = fn.get("name", label)
        if name in seen:
            problems.append(f"{name}: duplicate tool name")
        seen.add(name)
        params = fn.get("parameters")
        if not isinstance(params, dict):
            continue
        problem = schema_problem(params)  # no $ref fetched, no pattern RE2 cannot run
        if problem:
            problems.append(f"{name}: parameters schema {problem}")
            continue
        if domain.strict_schemas:
            problems += [f"{name}: {p}" for p in _strictness(params, "parameters")]
    for group, names in (
        ("read-only", domain.read_only_tools),
        ("request", domain.chains.requests),
        ("confirmation", domain.chains.confirmations),
    ):
        problems += [f"{group} tool {n!r} is not a defined tool" for n in sorted(names - seen)]
    for name in domain.default_whitelist:
        if name not in domain.read_only_tools:
            problems.append(f"whitelist: {name!r} is not a read-only tool")
    if domain.extra_checks is not None:
        try:
            problems += domain.extra_checks(domain)
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
            problems.append(f"data files are inconsistent: {type(exc).__name__}: {exc}")
    return problems


def _strictness(schema: dict[str, Any], where: str) -> Iterator[str]:
    """Objects must close their properties and name required fields; recurse into children."""
    if schema.get("type") == "object":
        if schema.get("additionalProperties") is not False:
            yield f"{where}: object schema must set additionalProperties: false"
        if "required" not in schema:
            yield f"{where}: object schema must list its required fields"
        for key, child in schema.get("properties", {}).items():
            yield from _strictness(child, f"{where}.{key}")
    if schema.get("type") == "array" and isinstance(schema.get("items"), dict):
        yield from _strictness(schema["items"], f"{where}[]")


def validate_files(domain: Domain, files: Mapping[str, bytes]) -> list[str]:
    """Validate a domain rebuilt from (edited) data files: the generic contract plus the domain's
    own checks. Files that cannot even be loaded are one problem, never an exception."""
    if domain.from_files is None:
        return [f"the {domain.name} domain cannot be rebuilt from data files"]
    try:
        rebuilt = domain.from_files(files)
    except RecursionError:
        return ["data files could not be loaded: JSON nested too deeply"]
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        return [f"data files could not be loaded: {type(exc).__name__}: {exc}"]
    return validate_domain(rebuilt)
