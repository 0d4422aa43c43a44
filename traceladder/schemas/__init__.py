"""Published JSON Schemas of the files traceladder writes and reads (ReportV1, BaselineV1).

Every such file is validated against its schema when written and when read: a file that does not
validate is an error with the path of the first problem, never a half-understood input — and a
document of ours that breaks its own schema is a bug (`SchemaViolation`), never a file on disk.
The validators are compiled once per process.

Two validators, one verdict: `jsonschema` is the reference — it explains every violation — and a
compiled `jsonschema_rs` validator of the same schema answers "valid?" first, in microseconds
instead of milliseconds (a report's results are validated one by one: ~3 ms each with jsonschema,
minutes for a 100k-trace report). Only a document the compiled validator rejects is walked by
jsonschema, whose errors are what a `SchemaViolation` says; should the two ever disagree, the
reference decides (decision 431; `tests/schemas/test_compiled_validator.py` holds them to one
verdict on every kind of violation).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

SCHEMAS = {"ReportV1": "report-v1.schema.json", "BaselineV1": "baseline-v1.schema.json"}


class SchemaViolation(Exception):
    """A document traceladder was about to write does not validate against its own published
    schema. That is a bug in traceladder, not a user error: the CLI reports it as an internal
    error (exit 3) and nothing is written."""


def schema_text(name: str) -> str:
    return (resources.files("traceladder.schemas") / SCHEMAS[name]).read_text(encoding="utf-8")


@cache
def validator(name: str) -> Draft202012Validator:
    from jsonschema import Draft202012Validator  # on first validation, not when a command starts

    schema = json.loads(schema_text(name))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


@cache
def compiled(name: str, definition: str | None = None) -> Callable[[Any], bool]:
    """The compiled validator of schema `name` (or of its `$defs/definition`): `is_valid` only."""
    import jsonschema_rs

    schema = json.loads(schema_text(name))
    if definition is not None:
        schema = {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": f"#/$defs/{definition}"}
    is_valid: Callable[[Any], bool] = jsonschema_rs.Draft202012Validator(
        schema, validate_formats=True
    ).is_valid
    return is_valid


@cache
def part_validator(name: str, definition: str) -> Draft202012Validator:
    """A validator of one `$defs` entry of schema `name` (ReportV1's `result`): what checks a
    document streamed a part at a time, with the same rules as the whole."""
    from jsonschema import Draft202012Validator

    schema = json.loads(schema_text(name))
    part = {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": f"#/$defs/{definition}"}
    return Draft202012Validator(part, format_checker=Draft202012Validator.FORMAT_CHECKER)


def require_valid_part(name: str, definition: str, part: Any, where: str) -> None:
    """`require_valid` for one part of a document of schema `name`, validated against its
    `$defs/definition`; `where` is the part's path in the whole document (`results/3`), so the
    violation names the same place a check of the whole would."""
    if compiled(name, definition)(part):
        return
    errors = sorted(
        part_validator(name, definition).iter_errors(part), key=lambda e: (len(e.absolute_path), e.message)
    )
    if errors:
        found = [f"{_where([where, *e.absolute_path])}: {e.message[:200]}" for e in errors[:3]]
        raise SchemaViolation(f"refusing to write an invalid {name}: {'; '.join(found)}")


def problems(name: str, document: Any, limit: int = 3) -> list[str]:
    """Up to `limit` ways `document` breaks schema `name`, most relevant first, each as
    `where: what` (empty when it validates)."""
    errors = sorted(validator(name).iter_errors(document), key=lambda e: (len(e.absolute_path), e.message))
    return [f"{_where(e.absolute_path)}: {e.message[:200]}" for e in errors[:limit]]


def _where(path: Iterable[Any]) -> str:
    return "/".join(map(str, path)) or "(top level)"


def first_problem(name: str, document: Any) -> str | None:
    """Where and how `document` breaks schema `name` (the most relevant error), or None."""
    found = problems(name, document, limit=1)
    return found[0] if found else None


def require_valid(name: str, document: Any, also: Callable[[Any], list[str]] | None = None) -> None:
    """Raise `SchemaViolation` naming the first violations unless `document` validates against
    schema `name` — and then passes `also`, the contract checks a schema cannot state (run only
    on a document the schema accepts)."""
    found = [] if compiled(name)(document) else problems(name, document)
    if not found and also is not None:
        found = also(document)
    if found:
        raise SchemaViolation(f"refusing to write an invalid {name}: {'; '.join(found[:3])}")
