"""How every tool schema becomes a validator — the one trust boundary for schemas.

A parameters schema read from a trace, a store written by others, a domain folder, a cases file or
a `--tools` file is data someone else wrote. Every path that compiles one goes through this module:
`schema_problem` says why it cannot be used (not JSON Schema 2020-12, or `unusable` below: a remote
or file `$ref` is a finding here, never a fetch), `compile_schema` builds its validator and
`schema_errors` runs it within a budget. Only the schemas shipped with traceladder or an installed
plug-in (code already) are `trusted`: plain jsonschema, still with no `$ref` ever retrieved.

Untrusted schemas are checked with jsonschema (Draft 2020-12, format checking on), through its
`validators.extend` API, with three keywords whose regular expressions run on RE2 (`safe_regex`):
`pattern`, `patternProperties` and `additionalProperties` — jsonschema's own messages kept word for
word. `format: regex` is checked as jsonschema does, by compiling the string with `re` (compiling
never matches, so it never backtracks; a pattern nested too deeply is `Uncheckable`).
`unusable` says beforehand what such a validator could not check safely; a schema it names is
not used (a captured one: rung 1 `not_evaluated`, with the reason; a file's: one line, exit 2):

- a pattern RE2 refuses (a backreference, a lookaround, a count above 1000);
- `unevaluatedProperties` beside `patternProperties` (jsonschema matches that pair with `re`);
- a `$ref` that is not a JSON pointer into the schema's own subschemas (elsewhere — a URL, a
  missing place, an `enum` or `default` value — it would fail or escape these checks mid-judging),
  and `$id`/`$anchor`/`$dynamicRef` below the root (they move where a pointer leads).

`$schema` keywords are dropped before compiling: jsonschema would otherwise switch a subschema
(or `"$ref": "#"`) to its stock validator, whose patterns run on `re`. Every captured schema is
judged as 2020-12 anyway.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any
from urllib.parse import unquote

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import SchemaError, ValidationError
from referencing import Registry
from referencing.exceptions import NoSuchResource

from traceladder.evaluators.safe_regex import cost, refusal, search

# Work units one call's check may spend (a keyword evaluated, a regex search, a pair compared):
# deterministic, unlike a deadline, so the same call gets the same answer on any machine.
BUDGET = 200_000
_MAX_PATTERNS = 1_000  # distinct regular expressions one captured schema may use
_MAX_ERRORS = 100  # errors kept per call (each message may quote the whole argument)
_spent = threading.local()

# Keys whose values are data, not schemas: a "pattern" inside them is not a keyword.
_DATA = frozenset({"enum", "const", "default", "examples", "description", "title", "$comment"})
# Keys whose values map names (property names, definition names) to schemas.
_NAMED = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})
_MOVERS = ("$id", "$anchor", "$dynamicAnchor", "$dynamicRef", "$recursiveRef", "$recursiveAnchor")


def _nodes(schema: Any, depth: int = 0) -> Iterator[tuple[dict[str, Any], int]]:
    """Every object in schema position (not inside data keywords), with its depth."""
    if isinstance(schema, list):
        for item in schema:
            yield from _nodes(item, depth)
    elif isinstance(schema, dict):
        yield schema, depth
        for key, value in schema.items():
            if key in _NAMED and isinstance(value, dict):
                for sub in value.values():  # the names are not keywords
                    yield from _nodes(sub, depth + 1)
            elif key not in _DATA:
                yield from _nodes(value, depth + 1)


def _patterns(node: dict[str, Any]) -> Iterator[str]:
    if isinstance(node.get("pattern"), str):
        yield node["pattern"]
    if isinstance(node.get("patternProperties"), dict):
        yield from (k for k in node["patternProperties"] if isinstance(k, str))


def _ref_problem(root: Any, ref: Any) -> str | None:
    """Why a `$ref` would leave the captured schema's checked subschemas, or None."""
    if not isinstance(ref, str) or not (ref == "#" or ref.startswith("#/")):
        return f"$ref {str(ref)[:80]!r} is not a pointer into the definition itself"
    target, named = root, False
    for raw in unquote(ref[2:]).split("/") if ref != "#" else ():  # decoded, then split: as `referencing`
        key = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(target, dict) and key in target and (named or key not in _DATA):
            target, named = target[key], not named and key in _NAMED
        elif isinstance(target, list) and key.isascii() and key.isdigit() and int(key) < len(target):
            target, named = target[int(key)], False
        else:
            return f"$ref {ref[:80]!r} leads nowhere a schema is"
    at_schema = isinstance(target, dict | bool) and not named  # not a map of names itself
    return None if at_schema else f"$ref {ref[:80]!r} leads nowhere a schema is"


def unusable(schema: Any) -> str | None:
    """Why a captured schema cannot be checked safely by `untrusted_validator`, or None."""
    nodes = list(_nodes(schema))
    if len({p for node, _ in nodes for p in _patterns(node)}) > _MAX_PATTERNS:
        return f"more than {_MAX_PATTERNS} distinct patterns"
    for node, _ in nodes:
        for pattern in _patterns(node):
            why = refusal(pattern)
            if why is not None:
                return f"pattern {pattern[:80]!r} is one RE2, the linear-time engine, cannot run ({why})"
    for node, depth in nodes:
        moved = next((k for k in _MOVERS if k in node and (depth or k != "$id")), None)
        if moved:
            return f"{moved} is not followed in captured definitions"
        if "$ref" in node and (problem := _ref_problem(schema, node["$ref"])):
            return problem
    if any("unevaluatedProperties" in n for n, _ in nodes) and any(
        "patternProperties" in n for n, _ in nodes
    ):
        return "unevaluatedProperties with patternProperties is not checked in captured definitions"
    return None


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not _search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: dict[str, Any], instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(
    validator: Any, extra: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    """jsonschema's `additionalProperties`, its messages included, with the patterns matched by RE2."""
    if not validator.is_type(instance, "object"):
        return
    known, patterns = schema.get("properties", {}), list(schema.get("patternProperties", {}))
    extras = {k for k in instance if k not in known and not any(_search(p, k) for p in patterns)}
    if validator.is_type(extra, "object"):
        for key in extras:
            yield from validator.descend(instance[key], extra, path=key)
    elif not extra and extras:
        joined = ", ".join(repr(each) for each in sorted(extras, key=str))
        if "patternProperties" in schema:
            verb = "does" if len(extras) == 1 else "do"
            regexes = ", ".join(repr(each) for each in sorted(patterns))
            yield ValidationError(f"{joined} {verb} not match any of the regexes: {regexes}")
        else:
            verb = "was" if len(extras) == 1 else "were"
            yield ValidationError(f"Additional properties are not allowed ({joined} {verb} unexpected)")


class Uncheckable(Exception):
    """This call cannot be checked against the captured schema: over budget, or the schema and the
    argument together break the validator (a reference cycle, a number too large to divide)."""


def _spend(units: int) -> None:
    _spent.units = getattr(_spent, "units", 0) + units
    if _spent.units > BUDGET:
        raise Uncheckable(f"checking it against the captured definition needs more than {BUDGET:,} steps")


def _search(pattern: str, text: str) -> bool:
    _spend(cost(pattern, text))
    return search(pattern, text)


def _price(keyword: str, value: Any, instance: Any) -> int:
    """Units a keyword costs beyond its one: the ones whose own work grows with their input."""
    if keyword == "uniqueItems" and isinstance(instance, list):
        return len(instance) ** 2 // 10  # pairwise comparison
    if keyword in ("enum", "const") and isinstance(value, list):
        return len(value) // 10
    if keyword == "format" and isinstance(instance, str):
        return len(instance) // 100
    return 0


def _budgeted(keyword: str, check: Callable[..., Any]) -> Callable[..., Iterator[ValidationError]]:
    def spend_then_check(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
        _spend(1 + _price(keyword, value, instance))
        return check(validator, value, instance, schema) or iter(())

    return spend_then_check


_OWN = {
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
}
LinearRegexValidator = validators.extend(
    Draft202012Validator,
    {k: _budgeted(k, _OWN.get(k, f)) for k, f in Draft202012Validator.VALIDATORS.items()},
)


def untrusted_errors(validator: Any, arguments: Any) -> list[ValidationError]:
    """The first errors of `arguments` against a validator from `untrusted_validator`, within
    `BUDGET`. Raises `Uncheckable` (with the reason) instead of running long or failing."""
    _spent.units = 0
    try:
        return list(itertools.islice(validator.iter_errors(arguments), _MAX_ERRORS))
    except Uncheckable:
        raise
    except RecursionError:
        raise Uncheckable(
            "the captured definition refers to itself without end, or the argument is nested too deeply"
        ) from None
    except Exception as exc:  # e.g. OverflowError: multipleOf 0.5 against 1e400; a $ref not retrieved
        raise Uncheckable(f"the validator cannot check it ({type(exc).__name__})") from None


def _without_dialect(schema: Any) -> Any:
    """A copy without `$schema` in schema positions (data values are kept as they are)."""
    if isinstance(schema, list):
        return [_without_dialect(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _NAMED and isinstance(value, dict):
            out[key] = {name: _without_dialect(sub) for name, sub in value.items()}
        elif key != "$schema":
            out[key] = value if key in _DATA else _without_dialect(value)
    return out


def _refuse(uri: str) -> Any:
    """The retriever of every validator: a `$ref` outside the schema is never fetched (jsonschema's
    default would open a URL or a file); it fails as `Uncheckable` where `unusable` let it by."""
    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]


# Every validator resolves `$ref` against this registry: the schema's own subschemas, nothing more.
NO_RETRIEVAL: Registry[Any] = Registry(retrieve=_refuse)  # type: ignore[call-arg]


def untrusted_validator(schema: Mapping[str, Any]) -> Any:
    """A validator for a captured schema (one `unusable` has nothing against)."""
    return LinearRegexValidator(
        _without_dialect(schema), format_checker=Draft202012Validator.FORMAT_CHECKER, registry=NO_RETRIEVAL
    )


def schema_problem(schema: Any) -> str | None:
    """Why a parameters schema from outside cannot judge calls, or None: one line, to follow
    "the definition of NAME " or "parameters ". Checked before anything compiles it: what could reach
    the network or run unbounded (`unusable`) first, then JSON Schema 2020-12's meta-schema."""
    if not isinstance(schema, dict):
        return "is not a JSON object"
    try:
        hostile = unusable(schema)
        if hostile:
            return f"cannot be used: {hostile}"
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return f"is not valid JSON Schema 2020-12: {exc.message}"
    except RecursionError:
        return "cannot be used: it is nested too deeply"
    return None


def compile_schema(schema: Mapping[str, Any], *, trusted: bool) -> Any:
    """The one way a tool schema becomes a validator: JSON Schema 2020-12 with format checking on
    (so `"format": "date"` rejects "2026-13-45"), no `$ref` ever retrieved. `trusted` (shipped with
    traceladder or an installed plug-in): jsonschema as it is; else the linear-time validator, for
    a schema `schema_problem` has nothing against. Run it with `schema_errors`."""
    if not trusted:
        return untrusted_validator(schema)
    formats = Draft202012Validator.FORMAT_CHECKER
    return Draft202012Validator(schema, format_checker=formats, registry=NO_RETRIEVAL)


schema_errors = untrusted_errors  # the one way to run a validator from `compile_schema`
