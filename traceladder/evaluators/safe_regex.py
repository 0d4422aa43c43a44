"""Regular expressions from schemas we did not write, matched in linear time.

A JSON Schema `pattern` (or a `patternProperties` key) is a regular expression, and Python's `re`
backtracks: a hostile one (`^(a+)+$`) against a 40-character argument runs for hours. Tool
definitions captured from other people's traces are untrusted input, so their validators match
with RE2 (google-re2), which never backtracks, through jsonschema's own extension API. A pattern
RE2 cannot run (a backreference, a lookaround) makes the definition unusable — rung 1
`not_evaluated`, with the reason — instead of a check whose cost nobody can bound.

Schemas we ship, and files the user names, keep jsonschema's `re` (their authors are trusted).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping
from typing import Any

import re2
from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # RE2 would log every pattern it refuses to stderr, past our one line
_OPTIONS.never_capture = True  # only "does it match" is asked
# Keys whose values are data, not schemas: a "pattern" inside them is not a keyword.
_DATA = frozenset({"enum", "const", "default", "examples", "description", "title", "$comment"})


@functools.lru_cache(maxsize=4096)
def _compiled(pattern: str) -> Any:
    return re2.compile(pattern, options=_OPTIONS)


def search(pattern: str, text: str) -> bool:
    """Whether `pattern` matches anywhere in `text` (JSON Schema's `pattern` semantics), in time
    linear in the text."""
    return _compiled(pattern).search(text) is not None


def matches(pattern: str, text: str) -> bool:
    """`search` where RE2 can run the pattern, else Python's `re` — for trusted schemas only (an
    untrusted one with such a pattern never gets this far: see `unusable`)."""
    try:
        compiled = _compiled(pattern)
    except re2.error:
        return re.search(pattern, text) is not None
    return compiled.search(text) is not None


def _patterns(schema: Any) -> Iterator[str]:
    """Every regular expression the schema applies: `pattern` values, `patternProperties` keys."""
    if isinstance(schema, list):
        for item in schema:
            yield from _patterns(item)
        return
    if not isinstance(schema, dict):
        return
    for key, value in schema.items():
        if key in _DATA:
            continue
        if key == "pattern" and isinstance(value, str):
            yield value
        elif key == "patternProperties" and isinstance(value, dict):
            yield from (k for k in value if isinstance(k, str))
            yield from _patterns(list(value.values()))
        elif key in ("properties", "$defs", "definitions", "dependentSchemas") and isinstance(value, dict):
            yield from _patterns(list(value.values()))
        else:
            yield from _patterns(value)


def _uses(schema: Any, keyword: str) -> bool:
    if isinstance(schema, list):
        return any(_uses(item, keyword) for item in schema)
    return isinstance(schema, dict) and any(
        k == keyword or (k not in _DATA and _uses(v, keyword)) for k, v in schema.items()
    )


def unusable(schema: Mapping[str, Any]) -> str | None:
    """Why an untrusted schema's regular expressions cannot all be matched in linear time, or None."""
    for pattern in _patterns(schema):
        try:
            _compiled(pattern)
        except re2.error as exc:
            reason = (
                exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else exc
            )
            return f"pattern {pattern[:80]!r} cannot be matched in linear time ({reason})"
    # jsonschema evaluates unevaluatedProperties' patternProperties with `re`, past our keywords
    if _uses(schema, "unevaluatedProperties") and _uses(schema, "patternProperties"):
        return "unevaluatedProperties with patternProperties is not checked for captured definitions"
    return None


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: dict[str, Any], instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(
    validator: Any, extra: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    """jsonschema's `additionalProperties`, its messages included, with the patterns matched by RE2."""
    if not validator.is_type(instance, "object"):
        return
    known, patterns = schema.get("properties", {}), list(schema.get("patternProperties", {}))
    extras = {k for k in instance if k not in known and not any(search(p, k) for p in patterns)}
    if validator.is_type(extra, "object"):
        for key in extras:
            yield from validator.descend(instance[key], extra, path=key)
    elif not extra and extras:
        joined = ", ".join(repr(each) for each in sorted(extras, key=str))
        if patterns:
            verb = "does" if len(extras) == 1 else "do"
            regexes = ", ".join(repr(each) for each in sorted(patterns))
            yield ValidationError(f"{joined} {verb} not match any of the regexes: {regexes}")
        else:
            verb = "was" if len(extras) == 1 else "were"
            yield ValidationError(f"Additional properties are not allowed ({joined} {verb} unexpected)")


LinearRegexValidator = validators.extend(
    Draft202012Validator,
    {
        "pattern": _pattern,
        "patternProperties": _pattern_properties,
        "additionalProperties": _additional_properties,
    },
)


def untrusted_validator(schema: Mapping[str, Any]) -> Any:
    """A validator for a schema someone else wrote: JSON Schema 2020-12 with format checking, as
    `domain.base.compile_validator`, its regular expressions matched by RE2."""
    return LinearRegexValidator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
