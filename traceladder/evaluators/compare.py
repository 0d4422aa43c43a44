"""Argument comparison under seed 1's parameter rules, and seed 2's default normalisation.

exact            recursive, type-aware: 1 == 1.0, booleans are not numbers, lists are
                 order-independent duplicate-insensitive sets, objects compare recursively.
normalized_str   Unicode-preserving trim + lowercase of every string leaf; punctuation and inner
                 whitespace stay significant.
normalized_date  ISO 8601 date or datetime only; date compares with date, datetime with datetime;
                 aware datetimes normalise to UTC; naive vs aware → PARAM_WRONG_FORMAT.
contains         the expected string is a substring of the actual string.
any              present, non-null, non-empty.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime
from typing import Any

RULES = ("exact", "normalized_str", "normalized_date", "contains", "any")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$")


class WrongFormat(Exception):
    """The actual value cannot be compared under the rule (e.g. naive vs aware datetime)."""


_NUMBERS = (int, float)  # exact types: bool is a subclass of int and must not count as a number


def _canonical(value: Any, fold: bool) -> Any:
    """A hashable canonical form: numbers as float, lists as frozensets, dicts as sorted tuples."""
    kind = type(value)
    if kind is str:
        return ("str", value.strip().lower() if fold else value)
    if kind in _NUMBERS:
        return ("num", float(value))
    if kind is bool or value is None:
        return ("bool", value) if kind is bool else ("null",)
    if isinstance(value, list):
        return ("list", frozenset(_canonical(v, fold) for v in value))
    if isinstance(value, dict):
        return ("obj", tuple(sorted((k, _canonical(v, fold)) for k, v in value.items())))
    return ("other", json.dumps(value, sort_keys=True, default=str))


def exact_equal(expected: Any, actual: Any) -> bool:
    if type(expected) is str and type(actual) is str:  # the common case, without canonical forms
        return expected == actual
    return _canonical(expected, False) == _canonical(actual, False)


def normalized_str_equal(expected: Any, actual: Any) -> bool:
    return _canonical(expected, True) == _canonical(actual, True)


def parse_iso(value: Any) -> date | datetime:
    """An ISO 8601 date or datetime; natural-language dates are not parsed (WrongFormat)."""
    if not isinstance(value, str):
        raise WrongFormat(f"{value!r} is not an ISO 8601 string")
    text = value.strip()
    try:
        if _DATE.match(text):
            return date.fromisoformat(text)
        if _DATETIME.match(text):
            return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise WrongFormat(str(exc)) from None
    raise WrongFormat(f"{value!r} is not an ISO 8601 date or datetime")


def normalized_date_equal(expected: Any, actual: Any) -> bool:
    want, got = parse_iso(expected), parse_iso(actual)
    if isinstance(want, datetime) != isinstance(got, datetime):
        return False  # a date never equals a datetime
    if isinstance(want, datetime) and isinstance(got, datetime):
        if (want.tzinfo is None) != (got.tzinfo is None):
            raise WrongFormat("naive and aware datetimes cannot be compared")
        if want.tzinfo is not None:
            return want.astimezone(UTC) == got.astimezone(UTC)
    return want == got


def compare(rule: str, expected: Any, actual: Any) -> tuple[bool, str | None]:
    """(equal, failure code when not). Raises ValueError for an unknown rule."""
    try:
        if rule == "exact":
            ok = exact_equal(expected, actual)
        elif rule == "normalized_str":
            ok = normalized_str_equal(expected, actual)
        elif rule == "normalized_date":
            ok = normalized_date_equal(expected, actual)
        elif rule == "contains":
            ok = isinstance(actual, str) and isinstance(expected, str) and expected in actual
        elif rule == "any":
            ok = actual is not None and actual != "" and actual != [] and actual != {}
        else:
            raise ValueError(f"unknown rule {rule!r}; choose one of {', '.join(RULES)}")
    except WrongFormat:
        return False, "PARAM_WRONG_FORMAT"
    return ok, None if ok else "PARAM_WRONG_VALUE"


def seed2_normalize(value: Any) -> Any:
    """Seed 2's canonicalisation when a case has no rules: trim + case-fold strings, dates to
    their canonical ISO form, recursively; then compared with exact (type-aware) equality."""
    if isinstance(value, str):
        try:
            return parse_iso(value).isoformat()
        except WrongFormat:
            return value.strip().casefold()
    if isinstance(value, list):
        return [seed2_normalize(v) for v in value]
    if isinstance(value, dict):
        return {k: seed2_normalize(v) for k, v in value.items()}
    return value
