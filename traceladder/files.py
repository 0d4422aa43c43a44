"""Reading and writing the files users name (--output, --junit, baselines, reviews, the CI step
summary): every failure — a directory, a missing folder, a full disk, bad or absurdly nested
JSON — becomes a one-line `UserError` that names the file, never a traceback."""

from __future__ import annotations

import json
import math
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from traceladder.errors import UserError
from traceladder.text import utf8_safe


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


MB = 1 << 20
# The most traceladder reads of each input file (docs/cli.md, "Files traceladder reads"): far above
# any real one, low enough that a hostile file costs seconds, not the machine's memory.
LIMITS = {
    "tools.json": 10 * MB,  # a domain folder's files
    "domain.toml": 1 * MB,
    "system_prompt.txt": 1 * MB,
    "responses.jsonl": 256 * MB,
    "cases.jsonl": 64 * MB,  # a folder's, or `--cases FILE`
    "--tools file": 10 * MB,
    "policy file": 1 * MB,
    "price table": 1 * MB,
}


def outside(folder: Path, name: str) -> str | None:
    """Why `folder/name` is not a file of that folder, or None: a link (or a `..`) leading out of
    it. A folder is read like an archive: what it holds, never what it points at."""
    try:
        root, target = folder.resolve(), (folder / name).resolve()
    except (OSError, RuntimeError):  # a link loop
        return f"{name} is a link that leads nowhere"
    if not target.is_relative_to(root):
        return f"{name} is a link to a file outside the folder (never read)"
    return None


def read_input(path: Path, what: str, limit: int) -> bytes:
    """The bytes of an input file, or a one-line `UserError` naming it: only a regular file is read
    (a FIFO, a device or a socket would block or never end: opened without waiting, then refused),
    and at most `limit` bytes of it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise UserError(f"{what} {path} does not exist") from None
    except OSError as exc:
        raise UserError(f"cannot read {what} {path}: {_reason(exc)}") from None
    with os.fdopen(fd, "rb") as handle:
        try:
            mode = os.fstat(fd).st_mode
            if stat.S_ISDIR(mode):
                raise UserError(f"{what} {path} is a directory, not a file")
            if not stat.S_ISREG(mode):
                raise UserError(f"{what} {path} is not a regular file (a FIFO, device or socket is not read)")
            data = handle.read(limit + 1)
        except OSError as exc:
            raise UserError(f"cannot read {what} {path}: {_reason(exc)}") from None
    if len(data) > limit:
        raise UserError(f"{what} {path} is larger than the {limit // MB} MB an input file may be")
    return data


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


def strict_json_value(value: Any) -> Any:
    """`value` with every NaN or infinity (not JSON: Python would write a bare `NaN`) as the string
    that names it ("NaN", "Infinity", "-Infinity"): shown as such, and the output stays JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity"
    if isinstance(value, dict):
        return {k: strict_json_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [strict_json_value(v) for v in value]
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
