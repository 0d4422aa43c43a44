"""Regular expressions from schemas we did not write, matched in linear time by RE2.

A JSON Schema `pattern` (or a `patternProperties` key) is an ECMA-262 regular expression, and
Python's `re` backtracks: a hostile one (`^(a+)+$`) against a 40-character argument runs for hours.
RE2 (google-re2) never backtracks. Where ECMA-262 and RE2 spell or mean a thing differently, the
pattern is translated to ECMA's meaning first: `\\uXXXX` escapes (and surrogate pairs) become
`\\x{…}`, `\\s`/`\\S` get ECMA's white space (RE2's is ASCII only), and `.` excludes every line
terminator (RE2's excludes only `\\n`). `\\d`, `\\w` and `$` already
agree (ASCII; end of input). What RE2 refuses — a backreference, a lookaround, a repetition count
above 1000 — is said by `refusal`, and the schema using it is not used (see `untrusted_schema`).
"""

from __future__ import annotations

import functools
import re
from typing import Any

import re2

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # RE2 would log every pattern it refuses to stderr, past our one line
_OPTIONS.never_capture = True  # only "does it match" is asked
# ECMA-262 WhiteSpace and LineTerminator (what `\s` means in a JSON Schema pattern)
_SPACE = r"\t-\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}"
_HEX4 = re.compile(r"[0-9A-Fa-f]{4}")


def _code_point(pattern: str, i: int) -> tuple[int, int] | None:
    """The code point of a `\\uXXXX` escape at `i` (a surrogate pair read as one), and where it ends."""
    if pattern[i + 1 : i + 2] != "u" or not _HEX4.fullmatch(pattern, i + 2, i + 6):
        return None
    point, end = int(pattern[i + 2 : i + 6], 16), i + 6
    if (
        0xD800 <= point < 0xDC00
        and pattern[end : end + 2] == "\\u"
        and _HEX4.fullmatch(pattern, end + 2, end + 6)
    ):
        low = int(pattern[end + 2 : end + 6], 16)
        if 0xDC00 <= low < 0xE000:
            point, end = 0x10000 + ((point - 0xD800) << 10) + (low - 0xDC00), end + 6
    return point, end


def translate(pattern: str, *, ascii_boundaries: bool = False) -> str:
    """An ECMA-262 pattern in RE2's syntax, meaning the same (see the module docstring). Inside a
    character class `\\S` stays RE2's (a class cannot hold a negated set). `ascii_boundaries`:
    spell `\\b`/`\\B` as Rust's ASCII word boundary (`for_validator`)."""
    out: list[str] = []
    i, in_class = 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            escape = _code_point(pattern, i)
            if escape is not None:
                out.append(f"\\x{{{escape[0]:X}}}")
                i = escape[1]
                continue
            nxt = pattern[i + 1]
            if nxt == "s":
                out.append(_SPACE if in_class else f"[{_SPACE}]")
            elif nxt == "S" and not in_class:
                out.append(f"[^{_SPACE}]")
            elif nxt in "bB" and ascii_boundaries and not in_class:
                out.append(f"(?-u:\\{nxt})")
            else:
                out.append(c + nxt)
            i += 2
            continue
        if c == "." and not in_class:  # ECMA: any character but a line terminator (RE2: but \n)
            out.append(r"[^\n\r\x{2028}\x{2029}]")
            i += 1
            continue
        if c == "[" and not in_class:
            in_class = True
        elif c == "]" and in_class:
            in_class = False
        out.append(c)
        i += 1
    return "".join(out)


def for_validator(pattern: str) -> str:
    """An ECMA-262 pattern as the schema validator's engine (Rust's `regex`, linear time, reading
    the pattern as ECMA-262 syntax) must be given it to mean what ECMA-262 says: `translate`'s
    spelling, which Rust reads alike, with `\\b`/`\\B` made ASCII (Rust's are Unicode). `\\d`
    and `\\w` the validator already reads as ASCII. `tests/threats/test_hostile_patterns.py`
    holds it to ECMA-262 case by case."""
    return translate(pattern, ascii_boundaries=True)


@functools.lru_cache(maxsize=4096)
def _compiled(pattern: str) -> Any:
    return re2.compile(translate(pattern), options=_OPTIONS)


def refusal(pattern: str) -> str | None:
    """Why RE2 cannot run this pattern, or None when it can."""
    try:
        _compiled(pattern)
    except re2.error as exc:
        why = exc.args[0] if exc.args else exc
        return why.decode("utf-8", "replace") if isinstance(why, bytes) else str(why)
    except UnicodeError:  # a lone surrogate in the pattern text
        return "the pattern is not valid Unicode"
    return None


def cost(pattern: str, text: str) -> int:
    """Work units of one search, for a caller's budget: RE2 is linear in the text, with a factor
    that grows with the compiled program (a counted repetition such as `[\\s\\S]{1000}` is big)."""
    return 1 + len(text) * _compiled(pattern).programsize // 100_000


def search(pattern: str, text: str) -> bool:
    """Whether `pattern` matches anywhere in `text` (JSON Schema's `pattern` semantics), in time
    linear in the text. A lone surrogate in the text (JSON allows one) is read as U+FFFD."""
    compiled = _compiled(pattern)
    try:
        return compiled.search(text) is not None
    except UnicodeEncodeError:
        text = "".join("\ufffd" if 0xD800 <= ord(ch) < 0xE000 else ch for ch in text)
        return compiled.search(text) is not None


def matches(pattern: str, text: str) -> bool:
    """`search` where RE2 can run the pattern, else Python's `re` — for trusted schemas only (an
    untrusted one with such a pattern is never used: see `untrusted_schema.unusable`)."""
    if refusal(pattern) is not None:
        return re.search(pattern, text) is not None
    return search(pattern, text)


@functools.lru_cache(maxsize=4096)
def _python_compiled(pattern: str) -> Any:
    return re2.compile(pattern, options=_OPTIONS)


def python_refusal(pattern: str) -> str | None:
    """Why RE2 cannot run a policy file's pattern (Python `re` syntax, which RE2 reads as is for
    everything it supports), or None when it can."""
    try:
        _python_compiled(pattern)
    except re2.error as exc:
        why = exc.args[0] if exc.args else exc
        return why.decode("utf-8", "replace") if isinstance(why, bytes) else str(why)
    except UnicodeError:
        return "the pattern is not valid Unicode"
    return None


def full_match(pattern: str, text: str) -> bool:
    """Whether a policy pattern (one `python_refusal` has nothing against) matches all of `text`,
    in time linear in the text. A lone surrogate in the text is read as U+FFFD."""
    compiled = _python_compiled(pattern)
    try:
        return compiled.fullmatch(text) is not None
    except UnicodeEncodeError:
        text = "".join("\ufffd" if 0xD800 <= ord(ch) < 0xE000 else ch for ch in text)
        return compiled.fullmatch(text) is not None
