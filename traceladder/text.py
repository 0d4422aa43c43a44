"""Making untrusted text safe to store and show: model output, tool names and span data reach
the store, terminals, XML files and CI logs, and a hostile model controls all of them.

- `utf8_safe` for storage: JSON may carry lone surrogates (`"\\ud800"` is a legal escape) that
  no UTF-8 encoder accepts; they become U+FFFD, the one lossless-as-possible choice.

- `printable` for terminals: control characters (C0 but newline and tab, DEL, C1 — ESC and CSI
  among them) become visible `\\xNN` escapes, so data can never move the cursor, retitle the
  window or hide a line; lone surrogates become `\\uNNNN`, which a UTF-8 terminal can print.
- `xml_text` for XML 1.0: characters XML forbids (NUL, most C0, lone surrogates, U+FFFE/FFFF)
  become the same visible escapes; everything else stays as is (ElementTree escapes `<&"`).
"""

from __future__ import annotations

import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")
_TERMINAL_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
_XML_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: object) -> str:
    """`text` as a string that cannot act on a terminal."""
    return _TERMINAL_UNSAFE.sub(_escape, str(text))


def xml_text(text: object) -> str:
    """`text` as a string that is legal in an XML 1.0 document."""
    return _XML_UNSAFE.sub(_escape, str(text))


def utf8_safe(text: str) -> str:
    """`text` with lone surrogates replaced by U+FFFD, so it can be stored as UTF-8."""
    return text if text.isascii() else _SURROGATE.sub("\ufffd", text)


def utf8_deep(value: Any) -> Any:
    """`value` — a string, or lists, tuples and dicts of them — with every string `utf8_safe`.
    For the store's Arrow boundary, after an encoder refused a batch: the rare slow path."""
    if isinstance(value, str):
        return utf8_safe(value)
    if isinstance(value, list | tuple):
        return type(value)(utf8_deep(v) for v in value)
    if isinstance(value, dict):
        return {utf8_deep(k): utf8_deep(v) for k, v in value.items()}
    return value
