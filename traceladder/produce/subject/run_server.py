"""The run's HTTP server on 127.0.0.1: what an agent under test talks to during a run.

One port, three routes:

* `POST /v1/traces` — an OTLP/HTTP receiver (protobuf or JSON, gzip): spans are attributed to
  their case (`attribution`) and written to the store before the answer, so a process's spans are
  durable when it exits. A body that is not OTLP is refused with 400 and counted; nothing else in
  the run is touched.
* `POST /tools/<token>` — `call_tool` for a process: `{"name", "arguments"}` → `{"content"}`,
  executed in the case's sandbox as an `execute_tool` span (the token names the case; unknown → 404).
* `/v1/chat/completions`, `/v1/models` — the `sim:` model, when the run uses one, so an agent
  needs no key.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from traceladder.decode import DecodeError, decode_traces
from traceladder.produce.agent.sim import SimModel
from traceladder.produce.subject.attribution import CaseTraces, write_attributed
from traceladder.produce.subject.toolbox import CaseEnded, ToolBox
from traceladder.receive.serve.body import HttpError, inflate, read_raw
from traceladder.receive.serve.responses import failure, success
from traceladder.store.db import Store

log = logging.getLogger(__name__)
MAX_BODY = 32 << 20


class RunServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, store: Store, traces: CaseTraces, sim: SimModel | None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.store = store
        self.traces = traces
        self.sim = sim
        self.toolboxes: dict[str, ToolBox] = {}
        self.lock = threading.Lock()
        self.refused = 0  # OTLP bodies refused as not OTLP
        self.write_error: Exception | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    @contextmanager
    def tools_for(self, toolbox: ToolBox) -> Iterator[str]:
        """A key naming this case run's tools while the block runs: an unguessable token, unique
        across repeats of one case, dead once the block ends. `tools_url(key)` is its `call_tool`
        URL; the MCP tool server serves the same key (`produce.subject.mcp_tools`)."""
        token = secrets.token_urlsafe(16)
        with self.lock:
            self.toolboxes[token] = toolbox
        try:
            yield token
        finally:
            with self.lock:
                self.toolboxes.pop(token, None)

    def tools_url(self, key: str) -> str:
        """The URL through which a process calls the tools of the case run `key` names."""
        return f"{self.url}/tools/{key}"

    def toolbox(self, key: str) -> ToolBox | None:
        """The toolbox of the running case `key` names; None for any other key (never a case's
        by its id: a key is a capability handed to that case run alone)."""
        with self.lock:
            return self.toolboxes.get(key)


@contextmanager
def serving(store: Store, traces: CaseTraces, sim: SimModel | None) -> Iterator[RunServer]:
    """The run's server, serving in a thread until the block ends."""
    server = RunServer(store, traces, sim)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


class _Handler(BaseHTTPRequestHandler):
    server: RunServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        log.debug("run server: " + format, *args)

    def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, payload: Any) -> None:
        self._send(status, json.dumps(payload, ensure_ascii=False).encode())

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        if self.path.rstrip("/").endswith("/v1/models") and self.server.sim is not None:
            self._json(200, {"object": "list", "data": [{"id": "sim", "object": "model"}]})
        else:
            self._json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:  # noqa: N802
        try:
            body = inflate(
                read_raw(self.rfile, self.headers, MAX_BODY),  # type: ignore[arg-type]
                self.headers.get("Content-Encoding"),
                MAX_BODY,
            )
        except HttpError as exc:
            self.close_connection = True
            self._json(exc.status, {"error": {"message": exc.message}})
            return
        path = self.path.split("?", 1)[0]
        if path == "/v1/traces":
            self._traces(body)
        elif path.startswith("/tools/"):
            self._tool(path.removeprefix("/tools/"), body)
        elif path.endswith("/chat/completions") and self.server.sim is not None:
            self._chat(body)
        else:
            self._json(404, {"error": {"message": f"no route {path}"}})

    def _traces(self, body: bytes) -> None:
        content_type = self.headers.get("Content-Type")
        try:
            batch = decode_traces(body, content_type)
        except DecodeError as exc:
            with self.server.lock:
                self.server.refused += 1
            self._send(400, *failure(400, str(exc), content_type))
            return
        try:
            write_attributed(self.server.store, self.server.traces, batch.table)
        except Exception as exc:  # a failed store write: the exporter retries, the run reports it
            with self.server.lock:
                self.server.write_error = self.server.write_error or exc
            self._send(503, *failure(503, "the span store could not be written", content_type))
            return
        self._send(200, *success("traces", len(batch.rejected), batch.message(), content_type))

    def _tool(self, token: str, body: bytes) -> None:
        toolbox = self.server.toolbox(token)
        if toolbox is None:
            self._json(404, {"error": {"message": "no such case, or it has ended"}})
            return
        try:
            request = json.loads(body)
            name, arguments, call_id = request["name"], request.get("arguments", "{}"), request.get("call_id")
            if not isinstance(name, str):
                raise TypeError("name is not a string")
            if call_id is not None and not isinstance(call_id, str):
                raise TypeError("call_id is not a string")
        except (ValueError, KeyError, TypeError) as exc:
            message = (
                'send {"name": TOOL, "arguments": JSON text or object, "call_id": the model\'s id '
                f"(optional)}} ({type(exc).__name__}: {exc})"
            )
            self._json(400, {"error": {"message": message}})
            return
        try:
            content = toolbox.call(name, arguments, call_id)
        except CaseEnded as exc:
            self._json(409, {"error": {"message": str(exc)}})
            return
        self._json(200, {"content": content})

    def _chat(self, body: bytes) -> None:
        assert self.server.sim is not None
        try:
            request = json.loads(body)
        except ValueError:
            self._json(400, {"error": {"message": "request body is not JSON"}})
            return
        status, payload, headers = self.server.sim.respond(request)
        data = json.dumps(payload, ensure_ascii=False).encode()
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
