"""The OTLP/HTTP request handler: routing, authentication, limits, decoding, answering.

Every request gets exactly one answer with a reason: 200 (with `partial_success` when some
items were rejected), 400 malformed, 401 token, 404 path, 405 method, 411 no length, 413 too
large, 415 content type or encoding, 408 when the head or the body did not arrive within its
deadline, 503 + Retry-After when the writer is behind, a segment could not be written, or every
connection this process allows is busy answering. A handler never lets an exception out: a bug
answers 500 and the receiver keeps serving.

Bounded against slow clients (slowloris): each request's head and body have a deadline (see
`deadlines`), and a process holds at most `max_connections` connections, shedding the oldest
idle one when a new one arrives (see `connections`), so a flood of trickling connections costs
neither all threads nor all file descriptors, and /healthz keeps answering.
"""

from __future__ import annotations

import contextlib
import errno
import hmac
import io
import json
import logging
import socket
import time
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from traceladder import __version__
from traceladder.decode import DecodedBatch, DecodeError, decode_logs, decode_traces
from traceladder.decode.bodies import MEDIA_TYPES, media_type
from traceladder.receive.serve import responses
from traceladder.receive.serve.body import HttpError, inflate, read_raw
from traceladder.receive.serve.connections import Closer, Connections
from traceladder.receive.serve.deadlines import BODY, HEAD, IDLE, DeadlineReader, PhaseTimeout
from traceladder.receive.serve.writer import Busy, GroupWriter, WriteFailed
from traceladder.sampling import Sampling
from traceladder.store.segments import pending

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
    read_timeout_s: float = 30.0  # the longest silence: between requests, and within one
    sample_rate: float = 1.0  # keep traces by id (OTel TraceIdRatioBased); the rest never stored
    header_timeout_s: float = 10.0  # request line + headers, from their first byte
    body_timeout_s: float = 60.0  # the whole body, from the end of the headers
    max_connections: int = 256  # per process; at the cap the oldest idle one is shed


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
        self.connections = Connections(config.max_connections)
        self.closer = Closer()

    def get_request(self) -> tuple[socket.socket, Any]:
        try:
            return self.socket.accept()
        except OSError as exc:
            # Out of descriptors (something besides connections used them up): the connection
            # stays queued and the socket stays readable; pause rather than spin on accept().
            if exc.errno in (errno.EMFILE, errno.ENFILE):
                time.sleep(0.05)
            raise

    def process_request(self, request: Any, client_address: Any) -> None:
        """Admit the connection under the cap (shedding the oldest idle one), or refuse it with
        503 + Retry-After when every connection is busy answering — without starting a thread."""
        admitted, shed = self.connections.admit(request)
        for victim in shed:
            with contextlib.suppress(OSError):
                victim.shutdown(socket.SHUT_RDWR)  # its thread reads end-of-file and finishes
        if not admitted:
            cap = self.config.max_connections
            message = f"all {cap} connections of this process are busy answering (--max-connections)"
            try:
                request.settimeout(1.0)
                request.sendall(responses.raw(503, message, retry_after=RETRY_AFTER_S))
            except OSError:
                request.close()
            else:
                self.closer.close(request)
            return
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        self.connections.remove(request)
        super().shutdown_request(request)

    def close_idle_connections(self) -> None:
        """Stop waiting for clients that are not being answered: a connection between requests,
        or still sending a request head, is closed now (its thread would otherwise sit in a read
        until a timeout); one whose request head is complete finishes, gets its answer, and is
        then closed."""
        self.stopping = True
        for conn in self.connections.idle():
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)


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
        config = self.server.config
        self.connection.settimeout(config.read_timeout_s)
        limits = {
            HEAD: (config.header_timeout_s, "--header-timeout"),
            BODY: (config.body_timeout_s, "--body-timeout"),
        }
        conn, connections = self.connection, self.server.connections
        self.reader = DeadlineReader(conn, config.read_timeout_s, limits, lambda: connections.was_shed(conn))
        self.rfile.close()  # the plain makefile() reader: replaced by one bounded per phase
        self.buffered = io.BufferedReader(self.reader)
        self.rfile = self.buffered

    def handle_one_request(self) -> None:
        self.server.connections.mark(self.connection, busy=False)
        self.reader.begin(IDLE)
        try:
            if not self.buffered.peek(1):  # the client closed (or was shed) between requests
                self.close_connection = True
                return
        except OSError:  # silent for --read-timeout between requests, or reset: just close
            self.close_connection = True
            return
        self.reader.begin(HEAD)  # the first byte is here: the head has its deadline from now
        try:
            super().handle_one_request()  # reads the head; a timeout in it is caught (and logged) there
        except ConnectionError:  # shed, or reset by the client, mid-head: no one to answer
            self.close_connection = True
            return
        if self.reader.phase == HEAD and self.reader.timed_out is not None:
            self._answer_raw(408, str(self.reader.timed_out))
        self.server.connections.mark(self.connection, busy=False)
        if self.server.stopping:
            self.close_connection = True

    def parse_request(self) -> bool:
        ok = super().parse_request()
        if ok:  # the head is complete: from here until the answer, this connection is busy
            self._head_complete()
        if self.server.stopping:
            self.close_connection = True
        return ok

    def handle_expect_100(self) -> bool:
        # called by parse_request once the headers are in, before it returns
        self._head_complete()
        return super().handle_expect_100()

    def _head_complete(self) -> None:
        if self.reader.phase != BODY:
            self.server.connections.mark(self.connection, busy=True)
            self.reader.begin(BODY)

    def _answer_raw(self, status: int, message: str) -> None:
        """An answer when no request was parsed (its head timed out): fixed bytes, then a
        lingering close (the client may still be sending its head)."""
        self.close_connection = True
        try:
            self.connection.sendall(responses.raw(status, message))
        except OSError:
            return
        self._linger()

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
                # this process's: open now, and since start shed (idle, at the cap) or refused (all busy)
                "connections": {
                    "open": len(self.server.connections),
                    "busy": self.server.connections.busy(),
                    "shed": self.server.connections.shed_total,
                    "refused": self.server.connections.refused_total,
                },
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
        except PhaseTimeout as exc:
            with contextlib.suppress(OSError):
                self._fail(HttpError(408, str(exc)), body_unread=True)
            return
        except OSError:
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
