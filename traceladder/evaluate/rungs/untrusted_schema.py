"""How every tool schema becomes a validator — the one trust boundary for schemas.

A parameters schema read from a trace, a store written by others, a domain folder, a cases file or
a `--tools` file is data someone else wrote. Every path that compiles one goes through this module:
`schema_problem` says why it cannot be used (not JSON Schema 2020-12, or `unusable` below: a remote
or file `$ref` is a finding here, never a fetch), `compile_schema` builds its validator and
`schema_errors` runs it. Only the schemas shipped with traceladder or an installed plug-in (code
already) are `trusted`: they skip `unusable`'s checks, nothing else.

Every schema is checked by one library, `jsonschema-rs` (Draft 2020-12, format checking on; it
accepts and enumerates errors ~7-20× faster than the jsonschema + fastjsonschema pair it replaced:
`bench/schema_validators.py`, decision 380). Its regular expressions run on Rust's `regex` crate
(`RegexOptions`), which never backtracks: a `pattern` is matched in time linear in the text, as RE2
did. Each pattern is first translated to ECMA-262's meaning (`safe_regex.for_validator`), so `\\s`,
`.`, `\\b`, surrogate-pair escapes mean what JSON Schema says. Messages are the library's own
(values quoted as JSON), with a pattern shown as the schema wrote it.

`unusable` says beforehand what the validator could not check safely; a schema it names is not
used (a captured one: rung 1 `not_evaluated`, with the reason; a file's: one line, exit 2):

- a pattern RE2 refuses (a backreference, a lookaround, a count above 1000): the linear engines
  run neither;
- a `$ref` that is not a JSON pointer into the schema's own subschemas (elsewhere — a URL, a
  missing place, an `enum` or `default` value — it would fail or escape these checks mid-judging),
  and `$id`/`$anchor`/`$dynamicRef` below the root (they move where a pointer leads);
- a schema whose subschemas, `$ref`s followed, unfold to more than `MAX_UNFOLDED` (2^24 paths
  through `allOf` of `$ref`s is exponential work for any validator), or that refers to itself
  without an argument level between (`{"a": {"$ref": "#/properties/a"}}`). The validator's work on
  one call is then bounded by the argument's size times the unfolded size — jsonschema-rs has no
  step budget of its own, so this bound replaces the step budget jsonschema's hooks allowed.

`$schema` keywords are dropped before compiling: every captured schema is judged as 2020-12.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

import jsonschema_rs

from traceladder.evaluate.rungs.safe_regex import for_validator, refusal

MAX_UNFOLDED = 100_000  # subschemas one captured schema may unfold to, its $refs followed
_MAX_PATTERNS = 1_000  # distinct regular expressions one captured schema may use
_MAX_ERRORS = 100  # errors kept per call (each message may quote the whole argument)

# Keys whose values are data, not schemas: a "pattern" inside them is not a keyword.
_DATA = frozenset({"enum", "const", "default", "examples", "description", "title", "$comment"})
# Keys whose values map names (property names, definition names) to schemas.
_NAMED = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})
_MOVERS = ("$id", "$anchor", "$dynamicAnchor", "$dynamicRef", "$recursiveRef", "$recursiveAnchor")
# Keywords whose subschemas apply to the same place in the argument (the rest descend into it).
_IN_PLACE = frozenset({"allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas", "$ref"})


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


_NOWHERE = object()


def _target(root: Any, ref: str) -> Any:
    """Where a local `$ref` ("#" or "#/…") leads, or `_NOWHERE` when not to a subschema."""
    target, named = root, False
    for raw in unquote(ref[2:]).split("/") if ref != "#" else ():  # decoded, then split: as `referencing`
        key = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(target, dict) and key in target and (named or key not in _DATA):
            target, named = target[key], not named and key in _NAMED
        elif isinstance(target, list) and key.isascii() and key.isdigit() and int(key) < len(target):
            target, named = target[int(key)], False
        else:
            return _NOWHERE
    at_schema = isinstance(target, dict | bool) and not named  # not a map of names itself
    return target if at_schema else _NOWHERE


def _ref_problem(root: Any, ref: Any) -> str | None:
    """Why a `$ref` would leave the captured schema's checked subschemas, or None."""
    if not isinstance(ref, str) or not (ref == "#" or ref.startswith("#/")):
        return f"$ref {str(ref)[:80]!r} is not a pointer into the definition itself"
    if _target(root, ref) is _NOWHERE:
        return f"$ref {ref[:80]!r} leads nowhere a schema is"
    return None


class _Unbounded(Exception):
    pass


def _unfolding_problem(root: Any) -> str | None:
    """Why the schema, its `$ref`s followed, is more work than `MAX_UNFOLDED` subschemas per
    argument level, or None. Counts each subschema as often as it is reached (so 24 levels of
    `allOf: [$ref, $ref]` count 2^24); a `$ref` back to a subschema already being unfolded is
    counted once when an argument level lies between (recursion the argument's depth bounds),
    and is unusable when none does (it refers to itself without end). `unusable` has checked
    every `$ref` leads to a subschema first."""
    sizes: dict[int, int] = {}

    def size(node: Any, active: dict[int, bool], in_place: bool) -> int:
        if not isinstance(node, dict | list):
            return 0
        key = id(node)
        if key in active:  # a cycle: through an argument level, or none
            if in_place and all(active[k] for k in list(active)[list(active).index(key) + 1 :]):
                raise _Unbounded("it refers to itself without end")
            return 1
        if key in sizes:
            return sizes[key]
        active[key] = in_place
        total = 1
        children: list[tuple[Any, bool]] = []
        if isinstance(node, list):
            children = [(item, in_place) for item in node]
        else:
            for k, value in node.items():
                if k in _DATA:
                    continue
                if k == "$ref" and isinstance(value, str):
                    children.append((_target(root, value), True))
                elif k in _NAMED and isinstance(value, dict):
                    children += [(sub, k == "dependentSchemas") for sub in value.values()]
                else:
                    children.append((value, k in _IN_PLACE))
        for child, here in children:
            total += size(child, active, here)
            if total > MAX_UNFOLDED:
                raise _Unbounded(f"it unfolds to more than {MAX_UNFOLDED:,} subschemas")
        del active[key]
        sizes[key] = total
        return total

    try:
        size(root, {}, True)
    except _Unbounded as exc:
        return str(exc)
    except RecursionError:
        return "it is nested too deeply"
    return None


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
    return _unfolding_problem(schema)


class Uncheckable(Exception):
    """This call cannot be checked against the schema: the validator failed on it (an argument
    nested too deeply, a value it cannot represent)."""


@dataclass(frozen=True)
class Violation:
    """One schema error: `message` (one line, the library's wording), `absolute_path` (where in
    the argument: property names and item indexes), `keyword` (the schema keyword that failed,
    e.g. "required"), and the names it is about: `missing` (a required property absent) or
    `unexpected` (properties `additionalProperties`/`unevaluatedProperties` does not allow)."""

    message: str
    absolute_path: tuple[str | int, ...]
    keyword: str
    missing: str | None = None
    unexpected: tuple[str, ...] = ()

    @property
    def path(self) -> tuple[str | int, ...]:
        return self.absolute_path


def _without_surrogates(value: Any) -> Any:
    """`value` with each lone surrogate (JSON allows `"\\ud800"`; UTF-8, which the validator reads,
    does not) read as U+FFFD — one character for one, so lengths and every other string keep
    their verdict, as `safe_regex.search` reads them."""
    if isinstance(value, str):
        if not _has_surrogate(value):
            return value
        return "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in value)
    if isinstance(value, list):
        return [_without_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {_without_surrogates(k): _without_surrogates(v) for k, v in value.items()}
    return value


def _has_surrogate(text: str) -> bool:
    return any("\ud800" <= ch <= "\udfff" for ch in text)


class SchemaValidator:
    """A compiled tool schema (from `compile_schema`). `is_valid` and `errors` never raise on a
    lone surrogate in the argument (see `_without_surrogates`); `schema_errors` turns any other
    failure into `Uncheckable`."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.patterns: dict[str, str] = {}  # the pattern given to the engine → the schema's own
        translated = self._translated(_without_dialect(schema))
        self._rs = jsonschema_rs.Draft202012Validator(
            translated,
            validate_formats=True,
            pattern_options=jsonschema_rs.RegexOptions(),
            retriever=_refuse,
        )

    def _translated(self, schema: Any) -> Any:
        """A copy whose patterns (`pattern` values, `patternProperties` names) mean in Rust's
        `regex` what ECMA-262 says they mean."""
        if isinstance(schema, list):
            return [self._translated(item) for item in schema]
        if not isinstance(schema, dict):
            return schema
        out: dict[str, Any] = {}
        for key, value in schema.items():
            if key == "pattern" and isinstance(value, str):
                out[key] = self._pattern(value)
            elif key == "patternProperties" and isinstance(value, dict):
                out[key] = {self._pattern(k): self._translated(v) for k, v in value.items()}
            elif key in _NAMED and isinstance(value, dict):
                out[key] = {name: self._translated(sub) for name, sub in value.items()}
            else:
                out[key] = value if key in _DATA else self._translated(value)
        return out

    def _pattern(self, pattern: str) -> str:
        engine = for_validator(pattern)
        self.patterns[engine] = pattern
        return engine

    def is_valid(self, instance: Any) -> bool:
        try:
            return bool(self._rs.is_valid(instance))
        except UnicodeEncodeError:
            return bool(self._rs.is_valid(_without_surrogates(instance)))

    def errors(self, instance: Any) -> list[Violation]:
        """The first `_MAX_ERRORS` errors of `instance`, in the library's order. A valid instance
        (the usual case) is answered by `is_valid`, which stops at nothing to explain."""
        if self.is_valid(instance):
            return []
        try:
            found = self._first(instance)
        except UnicodeEncodeError:
            found = self._first(_without_surrogates(instance))
        return [self._violation(err) for err in found]

    def iter_errors(self, instance: Any) -> Iterator[Violation]:
        """`errors`, as an iterator: what a plug-in's sandbox (given `Domain.validators`) calls, as
        it did on jsonschema's validators; each error has `message` and `absolute_path` as theirs."""
        return iter(self.errors(instance))

    def _first(self, instance: Any) -> list[Any]:
        errors: list[Any] = []
        for err in self._rs.iter_errors(instance):
            errors.append(err)
            if len(errors) >= _MAX_ERRORS:
                break
        return errors

    def _violation(self, err: Any) -> Violation:
        kind, path = err.kind, tuple(err.instance_path)
        keyword = str(err.schema_path[-1]) if err.schema_path else ""
        message = err.message
        if isinstance(kind, jsonschema_rs.ValidationErrorKind.Pattern):
            shown = json.dumps(self.patterns.get(kind.pattern, kind.pattern), ensure_ascii=False)
            message = f"{message.rsplit(' does not match ', 1)[0]} does not match {shown}"
        if isinstance(kind, jsonschema_rs.ValidationErrorKind.Required):
            return Violation(message, path, keyword, missing=str(kind.property))
        if isinstance(
            kind,
            jsonschema_rs.ValidationErrorKind.AdditionalProperties
            | jsonschema_rs.ValidationErrorKind.UnevaluatedProperties,
        ):
            return Violation(message, path, keyword, unexpected=tuple(map(str, kind.unexpected)))
        return Violation(message, path, keyword)


def schema_errors(validator: SchemaValidator, arguments: Any) -> list[Violation]:
    """The first errors of `arguments` against a validator from `compile_schema`. Raises
    `Uncheckable` (with the reason) instead of failing."""
    try:
        return validator.errors(arguments)
    except RecursionError:
        raise Uncheckable("the argument is nested too deeply") from None
    except Exception as exc:  # the validator could not represent or check the value
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
    """The retriever of every validator: a `$ref` outside the schema is never fetched; it fails the
    compile (a schema `unusable` let by, e.g. a trusted one) with this line."""
    raise ValueError(f"{uri[:80]}: a $ref outside the definition is not fetched")


def untrusted_validator(schema: Mapping[str, Any]) -> SchemaValidator:
    """A validator for a captured schema (one `schema_problem` has nothing against)."""
    return SchemaValidator(schema)


def schema_problem(schema: Any) -> str | None:
    """Why a parameters schema from outside cannot judge calls, or None: one line, to follow
    "the definition of NAME " or "parameters ". Checked before anything compiles it: what could reach
    the network or run unbounded (`unusable`) first, then JSON Schema 2020-12's meta-schema, then
    whether the validator compiles it."""
    if not isinstance(schema, dict):
        return "is not a JSON object"
    try:
        hostile = unusable(schema)
        if hostile:
            return f"cannot be used: {hostile}"
        jsonschema_rs.meta.validate(_without_surrogates(schema))
        SchemaValidator(schema)
    except jsonschema_rs.ValidationError as exc:
        return f"is not valid JSON Schema 2020-12: {exc.message}"
    except RecursionError:
        return "cannot be used: it is nested too deeply"
    except Exception as exc:  # the validator refuses it (a pattern its engine cannot compile, …)
        return f"cannot be used: {str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__}"
    return None


def compile_schema(schema: Mapping[str, Any], *, trusted: bool) -> SchemaValidator:
    """The one way a tool schema becomes a validator: JSON Schema 2020-12 with format checking on
    (so `"format": "date"` rejects "2026-13-45"), patterns in ECMA-262's meaning on a linear-time
    engine, no `$ref` ever retrieved. `trusted` (shipped with traceladder or an installed
    plug-in) schemas are compiled as they are; others only once `schema_problem` has nothing
    against them. Run it with `schema_errors`."""
    del trusted  # one validator for both: trust only decides whether `schema_problem` is asked first
    return SchemaValidator(schema)
