"""Small real HTTP servers on 127.0.0.1 for end-to-end tests: an OpenAI-compatible model that
wraps the simulated model (with scripted failures), and an OTLP/HTTP trace collector."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from traceladder.agent.sim import SimModel, SimSpec
from traceladder.cases import load_cases
from traceladder.domain.retail import load_retail_domain


class _QuietHandler(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:  # keep test output clean
        pass


@contextmanager
def _serve(handler: type[BaseHTTPRequestHandler]) -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@dataclass(frozen=True)
class Reply:
    """A scripted HTTP answer, hostile ones included. `trickle_s` sends the headers (with a large
    Content-Length), then one byte every `trickle_s` seconds until the client hangs up."""

    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    trickle_s: float | None = None
    delay_s: float = 0.0


def chat_reply(message: dict[str, Any], finish_reason: str = "stop") -> Reply:
    payload = {"id": "r", "object": "chat.completion", "created": 0, "model": "m",
               "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}]}  # fmt: skip
    return Reply(body=json.dumps(payload).encode())


class ModelServer:
    """/v1/chat/completions backed by sim:oracle. `failures` is a list of statuses returned (in
    order) before the first success; instructions in `always_fail` get 500 forever. Error bodies
    echo the Authorization header, like a careless proxy would, to prove we never repeat them.
    `override(body)` may return a `Reply` to send instead of the simulator's answer.
    `authorizations` holds the Authorization header of every request (GET /models included: it
    answers 404, as servers without that route do)."""

    def __init__(
        self,
        failures: list[int] | None = None,
        always_fail: set[str] | None = None,
        override: Callable[[dict[str, Any]], Reply | None] | None = None,
    ) -> None:
        self.failures = list(failures or [])
        self.always_fail = always_fail or set()
        self.override = override
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.authorizations: list[str | None] = []
        self.sim = SimModel(SimSpec("oracle", frozenset()), load_cases(), load_retail_domain())
        self.lock = threading.Lock()
        self.closed = threading.Event()

    @contextmanager
    def running(self) -> Iterator[str]:
        outer = self

        class Handler(_QuietHandler):
            def do_GET(self) -> None:
                with outer.lock:
                    outer.authorizations.append(self.headers.get("Authorization"))
                self._reply(404, {"error": {"message": f"no route {self.path}"}}, {})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                instruction = next(m["content"] for m in body["messages"] if m["role"] == "user")
                with outer.lock:
                    outer.authorizations.append(self.headers.get("Authorization"))
                    outer.requests.append(body)
                    outer.paths.append(self.path)
                    failure = outer.failures.pop(0) if outer.failures else None
                scripted = outer.override(body) if outer.override else None
                if scripted is not None:
                    self._scripted(scripted)
                    return
                if instruction in outer.always_fail:
                    failure = 500
                if failure:
                    echo = {"error": {"message": f"upstream failed for {self.headers.get('Authorization')}"}}
                    self._reply(failure, echo, {"Retry-After": "0"})
                    return
                status, payload, headers = outer.sim.respond(body)
                self._reply(status, payload, headers)

            def _scripted(self, reply: Reply) -> None:
                time.sleep(reply.delay_s)
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", reply.content_type)
                    length = 10_000_000 if reply.trickle_s is not None else len(reply.body)
                    self.send_header("Content-Length", str(length))
                    self.end_headers()
                    if reply.trickle_s is None:
                        self.wfile.write(reply.body)
                        return
                    while not outer.closed.is_set():
                        self.wfile.write(b" ")
                        self.wfile.flush()
                        outer.closed.wait(reply.trickle_s)
                except OSError:  # the client gave up and closed the connection: that is the point
                    pass

            def _reply(self, status: int, payload: dict[str, Any], headers: dict[str, str]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

        try:
            with _serve(Handler) as server:
                yield f"http://127.0.0.1:{server.server_address[1]}/v1"
        finally:
            self.closed.set()


class OtlpCollector:
    """POST /v1/traces (protobuf), decoded with the official proto classes."""

    def __init__(self) -> None:
        self.requests: list[ExportTraceServiceRequest] = []

    def span_names(self) -> list[str]:
        return [
            span.name
            for request in self.requests
            for resource in request.resource_spans
            for scope in resource.scope_spans
            for span in scope.spans
        ]

    @contextmanager
    def running(self) -> Iterator[str]:
        outer = self

        class Handler(_QuietHandler):
            def do_POST(self) -> None:
                data = self.rfile.read(int(self.headers["Content-Length"]))
                message = ExportTraceServiceRequest()
                message.ParseFromString(data)
                outer.requests.append(message)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

        with _serve(Handler) as server:
            yield f"http://127.0.0.1:{server.server_address[1]}"
