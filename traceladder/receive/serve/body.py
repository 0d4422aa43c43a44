"""Reading an HTTP request body safely: bounded size, bounded time, any content encoding.

The size limit applies to the *decompressed* body and is enforced while inflating, chunk by
chunk, so a gzip bomb costs at most `max_body` bytes of memory and the time to inflate them.
"""

from __future__ import annotations

import zlib
from email.message import Message
from typing import BinaryIO

_CHUNK = 1 << 16


class HttpError(Exception):
    """An answer to send instead of processing the request."""

    def __init__(self, status: int, message: str, *, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.retry_after = retry_after


def _too_large(max_body: int) -> HttpError:
    return HttpError(413, f"request body exceeds the limit of {max_body} bytes (--max-body)")


def _read_exact(stream: BinaryIO, n: int) -> bytes:
    parts = []
    while n > 0:
        part = stream.read(min(n, _CHUNK))
        if not part:
            raise HttpError(400, "request body ended before Content-Length bytes arrived")
        parts.append(part)
        n -= len(part)
    return b"".join(parts)


def _read_chunked(stream: BinaryIO, max_body: int) -> bytes:
    parts: list[bytes] = []
    total = 0
    while True:
        line = stream.readline(1024)
        if not line.endswith(b"\n"):
            raise HttpError(400, "malformed chunked transfer encoding")
        try:
            size = int(line.split(b";", 1)[0].strip(), 16)
        except ValueError:
            raise HttpError(400, "malformed chunk size in chunked transfer encoding") from None
        if size == 0:
            while stream.readline(1024) not in (b"\r\n", b"\n", b""):
                pass  # trailers
            return b"".join(parts)
        total += size
        if total > max_body:
            raise _too_large(max_body)
        parts.append(_read_exact(stream, size))
        if stream.readline(3) not in (b"\r\n", b"\n"):
            raise HttpError(400, "malformed chunked transfer encoding")


def read_raw(stream: BinaryIO, headers: Message, max_body: int) -> bytes:
    """The body as sent (still encoded). A declared length over the limit is refused unread."""
    if "chunked" in (headers.get("Transfer-Encoding") or "").lower():
        return _read_chunked(stream, max_body)
    length_text = headers.get("Content-Length")
    if length_text is None:
        raise HttpError(411, "Content-Length is required (or Transfer-Encoding: chunked)")
    try:
        length = int(length_text)
    except ValueError:
        raise HttpError(400, f"Content-Length is not a number: {length_text[:40]!r}") from None
    if length < 0:
        raise HttpError(400, "Content-Length is negative")
    if length > max_body:
        raise _too_large(max_body)
    return _read_exact(stream, length)


def inflate(raw: bytes, encoding: str | None, max_body: int) -> bytes:
    """Decode `Content-Encoding` (gzip, deflate or none), never producing more than `max_body`."""
    coding = (encoding or "identity").strip().lower()
    if coding in ("", "identity"):
        return raw
    if coding not in ("gzip", "x-gzip", "deflate"):
        raise HttpError(415, f"unsupported Content-Encoding {coding!r}; send gzip, deflate or none")
    # wbits 47 = 32 + 15: accept a zlib or gzip header (deflate senders disagree on which to send)
    inflater = zlib.decompressobj(47)
    out = bytearray()
    data = raw
    try:
        while True:
            chunk = inflater.decompress(data, _CHUNK)
            out += chunk
            if len(out) > max_body:
                raise _too_large(max_body)
            data = inflater.unconsumed_tail
            if inflater.eof and inflater.unused_data:  # concatenated gzip members
                data = inflater.unused_data
                inflater = zlib.decompressobj(47)
            elif not data and len(chunk) < _CHUNK:
                break
    except zlib.error as exc:
        raise HttpError(400, f"body is not valid {coding}: {exc}") from None
    if not inflater.eof:
        raise HttpError(400, f"{coding} body is truncated")
    return bytes(out)
