"""OTLP/HTTP capture server (stdlib only).

Binds 127.0.0.1 on an ephemeral port, accepts POSTs on any path (/v1/traces, /v1/logs,
/v1/metrics, /json/v1/traces, ...) and stores each body raw, in arrival order, together
with its path, Content-Type and Content-Encoding. Answers 200 with an empty
Export*ServiceResponse in the request's own media type: zero bytes for protobuf
(an empty message encodes to nothing), ``{}`` for JSON.
"""

from __future__ import annotations

import gzip
import threading
import zlib
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MAX_BODY = 64 * 1024 * 1024


@dataclass
class Capture:
    seq: int
    path: str
    content_type: str
    content_encoding: str
    body: bytes  # exactly as received (possibly compressed)

    def decoded(self) -> bytes:
        enc = self.content_encoding.strip().lower()
        if enc in ("", "identity"):
            return self.body
        if enc == "gzip":
            return gzip.decompress(self.body)
        if enc == "deflate":
            return zlib.decompress(self.body)
        raise ValueError(f"unsupported Content-Encoding {self.content_encoding!r}")


class OTLPSink:
    def __init__(self) -> None:
        self.captures: list[Capture] = []
        self._lock = threading.Lock()
        sink = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
                pass

            def _chunked(self) -> bytes:
                """A body sent with `Transfer-Encoding: chunked` (Node's exporters send no length)."""
                parts = []
                while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                    parts.append(self.rfile.read(size))
                    self.rfile.readline()
                while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return b"".join(parts)

            def do_POST(self) -> None:  # noqa: N802 - stdlib name
                length = int(self.headers.get("Content-Length") or 0)
                if length > MAX_BODY:
                    self.send_response(413)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = (
                    self._chunked()
                    if "chunked" in self.headers.get("Transfer-Encoding", "")
                    else self.rfile.read(length)
                )
                ctype = self.headers.get("Content-Type", "")
                with sink._lock:
                    sink.captures.append(
                        Capture(
                            seq=len(sink.captures) + 1,
                            path=self.path,
                            content_type=ctype,
                            content_encoding=self.headers.get("Content-Encoding", ""),
                            body=body,
                        )
                    )
                is_json = ctype.split(";")[0].strip().lower() == "application/json"
                reply = b"{}" if is_json else b""
                self.send_response(200)
                self.send_header("Content-Type", "application/json" if is_json else "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="otlp-sink", daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def by_path(self, path: str) -> list[Capture]:
        with self._lock:
            return [c for c in self.captures if c.path == path]

    def __enter__(self) -> OTLPSink:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)
