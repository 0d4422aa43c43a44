"""The ingest's input: the paths a user names, read as encoded OTLP requests — which files, how
they are compressed, what format they hold, and where each request begins and ends.

Formats: one protobuf `Export{Trace,Logs}ServiceRequest` per file; one OTLP/JSON request per
file; a JSON array of requests; JSON lines, one request per line, as the OpenTelemetry
Collector's `file` exporter writes them. Any of them may be gzip-compressed (detected by its
magic bytes, not the name). Decoding is `receive.ingest.decoding`'s job.
"""

from __future__ import annotations

import gzip
import io
import sys
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from traceladder.decode.bodies import JSON, PROTOBUF
from traceladder.decode.values import dumps, loads

GZIP_MAGIC = b"\x1f\x8b"
MAX_REQUEST = 1 << 30  # one request (file or line) larger than this is refused, not loaded


class ReadError(Exception):
    """A file (or part of one) that cannot be read as requests; the message says what is wrong."""


def expand(paths: list[str]) -> Iterator[str | Path]:
    """Files in the order given; directories recursively, sorted; "-" is stdin."""
    for raw in paths:
        if raw == "-":
            yield "-"
            continue
        path = Path(raw)
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith("."))
        else:
            yield path


def _open(path: str | Path) -> BinaryIO:
    if path == "-":
        return sys.stdin.buffer
    try:
        return open(path, "rb")  # noqa: SIM115 - closed by the caller
    except FileNotFoundError:
        raise ReadError("no such file") from None
    except IsADirectoryError:
        raise ReadError("is a directory") from None
    except OSError as exc:
        raise ReadError(exc.strerror or type(exc).__name__) from None


def _uncompressed(stream: BinaryIO) -> BinaryIO:
    """The stream, transparently gunzipped when it starts with the gzip magic bytes."""
    buffered: Any = stream if isinstance(stream, io.BufferedReader) else io.BufferedReader(stream)
    if buffered.peek(2)[:2] == GZIP_MAGIC:
        return gzip.GzipFile(fileobj=buffered)  # type: ignore[return-value]
    return buffered


def _is_object_line(line: bytes) -> bool:
    if line.lstrip()[:1] != b"{":
        return False
    try:
        loads(line)
    except ValueError:
        return False
    return True


def _json_requests(stream: BinaryIO, where: str) -> Iterator[tuple[str, bytes]]:
    """(location, body) per request of a JSON file: one object, an array, or JSON lines.

    JSON lines when the first or second line is a complete object on its own (so a first line
    cut short by a crash costs only itself); otherwise the file is one document."""
    first = stream.readline(MAX_REQUEST + 1)
    second = stream.readline(MAX_REQUEST + 1)
    if not second:  # a single line: one request (or an array)
        yield from _whole_json(first, where)
        return
    if not (_is_object_line(first) or _is_object_line(second)):  # pretty-printed: one document
        body = first + second + stream.read(MAX_REQUEST)
        if stream.read(1):
            raise ReadError(f"larger than {MAX_REQUEST} bytes; split it or use JSON lines")
        yield from _whole_json(body, where)
        return
    for line_no, line in enumerate(_lines(first, second, stream), start=1):
        if len(line) > MAX_REQUEST:
            raise ReadError(f"line {line_no} is larger than {MAX_REQUEST} bytes")
        if line and not line.isspace():  # not `strip()`: a line is a request of megabytes
            yield f"{where}:{line_no}", line


def _lines(first: bytes, second: bytes, stream: BinaryIO) -> Iterator[bytes]:
    yield first
    yield second
    while line := stream.readline(MAX_REQUEST + 1):
        yield line


def _whole_json(body: bytes, where: str) -> Iterator[tuple[str, bytes]]:
    if body.lstrip()[:1] != b"[":
        yield where, body
        return
    try:
        items = loads(body)
    except ValueError as exc:
        raise ReadError(f"invalid JSON: {exc}") from None
    for i, item in enumerate(items):
        yield f"{where}[{i}]", dumps(item)


@dataclass(frozen=True)
class Request:
    """One OTLP request read from a file, still encoded."""

    where: str  # "file", "file:3" (line), "file[2]" (array item)
    content_type: str  # PROTOBUF or JSON
    body: bytes


def read_requests(path: str | Path) -> Iterator[Request | ReadError]:
    """Every request in the file at `path`; problems are yielded (not raised) with their location, so one
    bad line does not cost the rest of the file."""
    where = "<stdin>" if path == "-" else str(path)
    try:
        raw = _open(path)
    except ReadError as exc:
        yield ReadError(f"{where}: {exc}")
        return
    try:
        stream = _uncompressed(raw)
        head = stream.peek(64)[:64].lstrip()  # type: ignore[attr-defined]
        if head[:1] in (b"{", b"["):
            for location, body in _json_requests(stream, where):
                yield Request(location, JSON, body)
        else:
            body = stream.read(MAX_REQUEST + 1)
            if len(body) > MAX_REQUEST:
                raise ReadError(f"larger than {MAX_REQUEST} bytes")
            if not body:
                raise ReadError("is empty")
            yield Request(where, PROTOBUF, body)
    except ReadError as exc:
        yield ReadError(f"{where}: {exc}")
    except (OSError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
        yield ReadError(f"{where}: cannot read: {exc}")
    finally:
        if raw is not sys.stdin.buffer:
            raw.close()
