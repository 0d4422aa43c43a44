"""Reading and writing the files users name (--output, --junit, baselines, reviews, the CI step
summary): every failure — a directory, a missing folder, a full disk, bad or absurdly nested
JSON — becomes a one-line `UserError` that names the file, never a traceback."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from traceladder.errors import UserError
from traceladder.text import utf8_safe


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def read_text_file(path: Path, what: str) -> str:
    """The UTF-8 text of `path`; `what` names the file in errors ("baseline", "system prompt", …)."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"{what} file {path} does not exist") from None
    except IsADirectoryError:
        raise UserError(f"{what} file {path} is a directory, not a file") from None
    except UnicodeDecodeError:
        raise UserError(f"{what} file {path} is not UTF-8 text") from None
    except OSError as exc:
        raise UserError(f"cannot read {what} file {path}: {_reason(exc)}") from None


def read_json_object(path: Path, what: str) -> dict[str, Any]:
    """A JSON object from `path`; `what` names the file in errors ("baseline", "review", …)."""
    text = read_text_file(path, what)
    try:
        value = json.loads(text)
    except RecursionError:
        raise UserError(f"{what} file {path} is nested too deeply to be a {what}") from None
    except ValueError as exc:
        raise UserError(f"{what} file {path} is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise UserError(f"{what} file {path} must hold a JSON object, not {type(value).__name__}")
    return value


def jsonl_lines(text: str) -> list[str]:
    """The lines of a JSONL text, split on "\\n" only (a last line without one still counts).

    Not `str.splitlines()`: it also splits on U+2028, U+2029 and U+0085, which a JSON string may
    hold raw, so one record would become two halves that are not JSON — a file `cases validate`
    passed would then fail to load.
    """
    lines = text.split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def write_text(path: Path, text: str, what: str, *, create_dirs: bool = True) -> None:
    """Write `text` to `path`, creating missing folders when `create_dirs`.

    A regular file is replaced atomically (temp file + fsync + rename), so a full disk never
    leaves half a file where a complete one was. Anything else that exists — /dev/stdout, a FIFO,
    /dev/full — is written in place: renaming over a device node would replace the device.
    The file is UTF-8: lone surrogates (decoded JSON "\\ud800" escapes in data) become U+FFFD.
    """
    write_chunks(path, (text,), what, create_dirs=create_dirs)


def write_chunks(path: Path, chunks: Iterable[str], what: str, *, create_dirs: bool = True) -> None:
    """`write_text` for a document produced piece by piece (a report streamed a batch at a time):
    each chunk is written as it comes, so only one is held. The file appears, atomically, only
    once the last chunk is written: an exception from `chunks` (a document refused half-way)
    leaves no file and the earlier one, if any, untouched."""
    try:
        if path.is_dir():
            raise IsADirectoryError(21, "Is a directory")
        if path.exists() and not path.is_file():
            with open(path, "w", encoding="utf-8") as handle:
                for chunk in chunks:
                    handle.write(utf8_safe(chunk))
            return
        if create_dirs:
            path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            with open(tmp, "w", encoding="utf-8") as handle:
                for chunk in chunks:
                    handle.write(utf8_safe(chunk))
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
    except OSError as exc:
        raise UserError(f"cannot write {what} {path}: {_reason(exc)}") from None


def append_text(path: Path, text: str, what: str) -> None:
    """Append to an existing file's end (e.g. $GITHUB_STEP_SUMMARY), creating the file but never
    its folder: a missing folder means the path is wrong."""
    try:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
    except OSError as exc:
        raise UserError(f"cannot append to {what} {path}: {_reason(exc)}") from None
