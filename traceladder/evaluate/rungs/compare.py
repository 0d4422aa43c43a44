"""Argument comparison under seed 1's parameter rules. `exact` is the default everywhere: no path
normalises silently, so the same two calls can never match in one place and not in another.

exact            recursive, type-aware: 1 == 1.0, booleans are not numbers, lists are
                 order-independent duplicate-insensitive sets, objects compare recursively.
normalized_str   Unicode-preserving trim + lowercase of every string leaf; punctuation and inner
                 whitespace stay significant.
normalized_date  ISO 8601 date or datetime only; date compares with date, datetime with datetime;
                 aware datetimes normalise to UTC; naive vs aware → PARAM_WRONG_FORMAT.
contains         the expected string is a substring of the actual string.
any              present, non-null, non-empty.

`compile_rule` does the expected side's work once (canonical form, parsed date), so comparing a
golden call with thousands of actual calls never re-normalises the golden value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Any

from traceladder.suite.cases.model import PARAM_RULES as RULES  # one owner: the case contract

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$")
_NUMBERS = (int, float)  # exact types: bool is a subclass of int and must not count as a number

# (equal, failure code when not): what comparing one actual value gives.
Outcome = tuple[bool, str | None]
Matcher = Callable[[Any], Outcome]
_EQUAL: Outcome = (True, None)
_WRONG_VALUE: Outcome = (False, "PARAM_WRONG_VALUE")
_WRONG_FORMAT: Outcome = (False, "PARAM_WRONG_FORMAT")


class WrongFormat(Exception):
    """The actual value cannot be compared under the rule (e.g. naive vs aware datetime)."""


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


def _same_instant(want: date | datetime, got: date | datetime) -> bool:
    if isinstance(want, datetime) != isinstance(got, datetime):
        return False  # a date never equals a datetime
    if isinstance(want, datetime) and isinstance(got, datetime):
        if (want.tzinfo is None) != (got.tzinfo is None):
            raise WrongFormat("naive and aware datetimes cannot be compared")
        if want.tzinfo is not None:
            return want.astimezone(UTC) == got.astimezone(UTC)
    return want == got


def _string_set(strings: frozenset[str], want: Any) -> Matcher:
    """`exact` for an expected list of strings (ids, names): a list of strings is compared as a
    set directly — what the canonical forms compare, without building them; anything else is
    compared by its canonical form as usual."""

    def matcher(got: Any) -> Outcome:
        if type(got) is list and all(type(v) is str for v in got):
            return _EQUAL if frozenset(got) == strings else _WRONG_VALUE
        return _EQUAL if _canonical(got, False) == want else _WRONG_VALUE

    return matcher


def compile_rule(rule: str, expected: Any) -> Matcher:
    """A matcher for one expected value under one rule. Raises ValueError for an unknown rule."""
    if rule == "exact":
        if type(expected) is str:
            return lambda got: _EQUAL if type(got) is str and got == expected else _WRONG_VALUE
        want = _canonical(expected, False)
        if isinstance(expected, list) and all(type(v) is str for v in expected):
            return _string_set(frozenset(expected), want)
        if type(expected) in _NUMBERS:  # a number's canonical form, built inline
            return lambda got: (
                (_EQUAL if want == ("num", float(got)) else _WRONG_VALUE)
                if type(got) in _NUMBERS
                else (_EQUAL if _canonical(got, False) == want else _WRONG_VALUE)
            )
        return lambda got: _EQUAL if _canonical(got, False) == want else _WRONG_VALUE
    if rule == "normalized_str":
        folded = _canonical(expected, True)
        return lambda got: _EQUAL if _canonical(got, True) == folded else _WRONG_VALUE
    if rule == "normalized_date":
        try:
            when = parse_iso(expected)
        except WrongFormat:  # a golden value the rule cannot read: nothing can equal it
            return lambda got: _WRONG_VALUE

        def dates(got: Any) -> Outcome:
            try:
                return _EQUAL if _same_instant(when, parse_iso(got)) else _WRONG_VALUE
            except WrongFormat:
                return _WRONG_FORMAT

        return dates
    if rule == "contains":
        if not isinstance(expected, str):
            return lambda got: _WRONG_VALUE
        return lambda got: _EQUAL if isinstance(got, str) and expected in got else _WRONG_VALUE
    if rule == "any":
        return lambda got: _EQUAL if got is not None and got not in ("", [], {}) else _WRONG_VALUE
    raise ValueError(f"unknown rule {rule!r}; choose one of {', '.join(RULES)}")


def compare(rule: str, expected: Any, actual: Any) -> Outcome:
    """(equal, failure code when not) for one pair. Raises ValueError for an unknown rule."""
    return compile_rule(rule, expected)(actual)
