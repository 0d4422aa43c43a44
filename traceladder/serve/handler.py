"""The OTLP/HTTP request handler: routing, authentication, limits, decoding, answering.

Every request gets exactly one answer with a reason: 200 (with `partial_success` when some
items were rejected), 400 malformed, 401 token, 404 path, 405 method, 411 no length, 413 too
large, 415 content type or encoding, 503 + Retry-After when the writer is behind or a segment
could not be written. A handler never lets an exception out: a bug answers 500 and the receiver
keeps serving.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import socket
import threading
import time
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from traceladder import __version__
from traceladder.otlp import DecodedBatch, DecodeError, decode_logs, decode_traces
from traceladder.otlp.decode import MEDIA_TYPES, media_type
from traceladder.sampling import Sampling
from traceladder.serve import responses
from traceladder.serve.body import HttpError, inflate, read_raw
from traceladder.serve.writer import Busy, GroupWriter, WriteFailed
from traceladder.storage.segments import pending

log = logging.getLogger(__name__)

ROUTES = {"/v1/traces": "traces", "/v1/logs": "logs"}
RETRY_AFTER_S = 1


LINGER_S = 2.0  # how long a refused request's body may keep arriving before the connection closes
LINGER_BYTES = 256 << 20  # and how much of it is read and dropped


@dataclass(frozen=True)
class ReceiverConfig:
    max_body: int
    token: str | None
    source: str = "otlp"
    read_timeout_s: float = 30.0
    sample_rate: float = 1.0  # keep traces by id (OTel TraceIdRatioBased); the rest never stored


class Receiver(ThreadingHTTPServer):
    """A threading HTTP server that owns the writer and the settings its handlers use."""

    daemon_threads = False  # server_close() waits for in-flight requests: they get their answer
    block_on_close = True
    allow_reuse_address = True

    def __init__(self, sock: socket.socket, writer: GroupWriter, config: ReceiverConfig) -> None:
        super().__init__(sock.getsockname()[:2], Handler, bind_and_activate=False)
        self.socket.close()
        self.socket = sock
        self.writer = writer
        self.config = config
        self.started = time.time()
        self.accepted = {"spans": 0, "logs": 0}
        self.sampling = Sampling(config.sample_rate)
        self.sampled_out = {"spans": 0, "logs": 0}  # rows of traces the sample rate dropped
        self.stopping = False
        self._connections: dict[Handler, bool] = {}  # handler → busy with a request
        self._connections_lock = threading.Lock()

    def track(self, handler: Handler, busy: bool | None) -> None:
        with self._connections_lock:
            if busy is None:
                self._connections.pop(handler, None)
            else:
                self._connections[handler] = busy

    def close_idle_connections(self) -> None:
        """Stop waiting for keep-alive clients: a connection between requests is closed now (its
        thread would otherwise sit in a read until the read timeout); one mid-request finishes,
        gets its answer, and is then closed."""
        self.stopping = True
        with self._connections_lock:
            idle = [h for h, busy in self._connections.items() if not busy]
        for handler in idle:
            with contextlib.suppress(OSError):
                handler.connection.shutdown(socket.SHUT_RDWR)


def sampled(table: pa.Table, sampling: Sampling) -> pa.Table:
    """The rows of the traces `sampling` keeps (rows outside any trace are kept). Decided per
    distinct trace id, so every span of a trace — in any request, on any worker — agrees."""
    if sampling.everything or not table.num_rows:
        return table
    ids = pc.unique(table.column("trace_id")).to_pylist()
    keep = [t for t in ids if t is None or sampling.keeps(t)]
    if len(keep) == len(ids):
        return table
    mask = pc.is_in(table.column("trace_id"), value_set=pa.array(keep, pa.string()))
    return table.filter(pc.fill_null(mask, True))


def _with_source(table: pa.Table, source: str) -> pa.Table:
    return table.append_column(
        pa.field("source", pa.string(), nullable=False), pa.array([source] * table.num_rows, pa.string())
    )


class Handler(BaseHTTPRequestHandler):
    server: Receiver
    protocol_version = "HTTP/1.1"  # keep-alive: the SDK exporters reuse connections
    server_version = f"traceladder/{__version__}"

    def setup(self) -> None:
        super().setup()
        # A sender that stops mid-body (or trickles) cannot hold a thread forever.
        self.connection.settimeout(self.server.config.read_timeout_s)
        self.server.track(self, busy=False)

    def finish(self) -> None:
        self.server.track(self, busy=None)
        super().finish()

    def parse_request(self) -> bool:
        # The request line has arrived: from here until the answer, this connection is busy.
        self.server.track(self, busy=True)
        ok = super().parse_request()
        if self.server.stopping:
            self.close_connection = True
        return ok

    def handle_one_request(self) -> None:
        super().handle_one_request()
        self.server.track(self, busy=False)
        if self.server.stopping:
            self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        log.debug("%s " + format, self.address_string(), *args)

    # -- answers -----------------------------------------------------------------------------

    def _send(
        self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def _fail(self, error: HttpError, *, body_unread: bool = False) -> None:
        if body_unread:  # the rest of the body is still on the wire: this connection is done
            self.close_connection = True
        body, content_type = responses.failure(error.status, error.message, self.headers.get("Content-Type"))
        headers = {}
        if error.retry_after is not None:
            headers["Retry-After"] = str(error.retry_after)
        if error.status == 401:
            headers["WWW-Authenticate"] = 'Bearer realm="traceladder"'
        if error.status == 405:
            headers["Allow"] = "POST" if self.path.split("?", 1)[0] in ROUTES else "GET"
        self._send(error.status, body, content_type, headers)
        if body_unread:
            self._linger()

    def _linger(self) -> None:
        """Read and drop what the client is still sending — bounded in bytes and time — before the
        connection closes. Closing with unread data resets the connection, and a client still
        writing its body would see EPIPE or ECONNRESET instead of the 413/401 it was sent (the
        "lingering close" of nginx and Apache)."""
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_WR)  # the answer is complete
            self.connection.settimeout(0.25)
            deadline = time.monotonic() + LINGER_S
            budget = LINGER_BYTES
            while budget > 0 and time.monotonic() < deadline:
                chunk = self.connection.recv(min(1 << 16, budget))
                if not chunk:
                    break
                budget -= len(chunk)
        except OSError:
            pass

    # -- routes ------------------------------------------------------------------------------

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        path = self.path.split("?", 1)[0]
        if path == "/healthz":
            writer = self.server.writer
            status = {
                "status": "ok",
                "version": __version__,
                "accepted": self.server.accepted,
                "queued_rows": writer.queued_rows,
                "sampled_out": self.server.sampled_out,
                "segments_written": writer.segments_written,
                # across all processes: received but not yet folded into the store
                "pending_segments": len(pending(writer.segments.root)),
            }
            self._send(200, json.dumps(status).encode(), responses.JSON_TYPE)
        elif path in ROUTES:
            self._fail(HttpError(405, f"{path} takes POST"))
        else:
            self._fail(HttpError(404, f"no such path {path}; OTLP/HTTP paths are /v1/traces and /v1/logs"))

    def do_POST(self) -> None:  # noqa: N802
        path = self.path.split("?", 1)[0]
        try:
            signal = ROUTES.get(path)
            if signal is None:
                raise HttpError(404, f"no such path {path}; OTLP/HTTP paths are /v1/traces and /v1/logs")
            self._authorize()
            self._check_type()
            config = self.server.config
            raw = read_raw(self.rfile, self.headers, config.max_body)  # type: ignore[arg-type]
        except HttpError as exc:
            self._fail(exc, body_unread=True)
            return
        except (TimeoutError, OSError):
            self.close_connection = True
            return
        try:
            body = inflate(raw, self.headers.get("Content-Encoding"), config.max_body)
            self._accept(signal, body)
        except HttpError as exc:
            self._fail(exc)
        except Exception as exc:  # a bug: answer 500, keep serving, never echo internals verbatim
            log.exception("internal error handling %s", path)
            self._fail(HttpError(500, f"internal error in traceladder serve ({type(exc).__name__})"))

    def do_PUT(self) -> None:  # noqa: N802
        self._other_method()

    do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = do_PUT  # noqa: N815

    def _other_method(self) -> None:
        path = self.path.split("?", 1)[0]
        if path in ROUTES or path == "/healthz":
            self._fail(HttpError(405, f"{path} does not take {self.command}"), body_unread=True)
        else:
            self._fail(HttpError(404, f"no such path {path}"), body_unread=True)

    # -- steps -------------------------------------------------------------------------------

    def _authorize(self) -> None:
        token = self.server.config.token
        if token is None:
            return
        given = self.headers.get("Authorization") or ""
        scheme, _, value = given.partition(" ")
        if scheme.lower() != "bearer" or not value:
            raise HttpError(401, "missing bearer token (Authorization: Bearer <token>)")
        if not hmac.compare_digest(value.strip().encode(), token.encode()):
            raise HttpError(401, "wrong bearer token")

    def _check_type(self) -> None:
        content_type = self.headers.get("Content-Type")
        if media_type(content_type) not in MEDIA_TYPES:
            shown = (content_type or "none")[:80]
            raise HttpError(
                415, f"unsupported Content-Type {shown!r}; send application/x-protobuf or application/json"
            )

    def _accept(self, signal: str, body: bytes) -> None:
        content_type = self.headers.get("Content-Type")
        decode = decode_traces if signal == "traces" else decode_logs
        try:
            batch: DecodedBatch = decode(body, content_type)
        except DecodeError as exc:
            raise HttpError(400, str(exc)) from None
        kind = "spans" if signal == "traces" else "logs"
        kept = sampled(batch.table, self.server.sampling)
        self.server.sampled_out[kind] += batch.table.num_rows - kept.num_rows
        batch = replace(batch, table=kept)
        if batch.table.num_rows:
            try:
                self.server.writer.submit(kind, _with_source(batch.table, self.server.config.source))
            except Busy as exc:
                raise HttpError(
                    503, f"receiver busy, retry later: {exc}", retry_after=RETRY_AFTER_S
                ) from None
            except WriteFailed as exc:
                raise HttpError(
                    503, f"could not store the request: {exc}", retry_after=RETRY_AFTER_S
                ) from None
        self.server.accepted[kind] += batch.table.num_rows
        body_out, out_type = responses.success(signal, len(batch.rejected), batch.message(), content_type)
        self._send(200, body_out, out_type)
