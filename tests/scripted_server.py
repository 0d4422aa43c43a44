"""Scripted HTTP servers on 127.0.0.1 for end-to-end tests: one plumbing, five behaviours.

Every server binds 127.0.0.1 on an ephemeral port when it is built, answers in a thread per
connection, records what it was sent — `requests` (every JSON-object body), `paths` (every POST's
path, query included), `authorizations` (every request's Authorization header, GETs included)
and `methods` — and is a context manager that stops it: `with ModelServer() as server: … server.url`.

* `ModelServer` — OpenAI-compatible chat completions answered as `sim:oracle` for a domain's suite
  (retail, or a declarative domain directory), with scripted failures and hostile answers
  (`failures`, `always_fail`, `override` → a `Reply`) and system-prompt markers that change the
  golden answers the way a pull request would.
* `LiveModel` (in `scripted_live_model.py`) — two versions of a retail model, every answer decided
  by the request alone, for live-evaluation tests (its script is what those tests compare the
  stored calls with).
* `JudgeServer` — an LLM judge for rung 5, answering by `mode`.
* `OtlpCollector` — POST /v1/traces (protobuf), decoded with the official proto classes.
* `StatusServer` — one status to every request (a key or a route the endpoint refuses).

A behaviour is `post(path, headers, body)` (and `get` for GETs) returning a `Reply`; the sending —
delays, trickles, a client that hangs up — is the plumbing's.
"""

from __future__ import annotations

import copy
import json
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date, timedelta
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

# -- the plumbing ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reply:
    """A scripted HTTP answer, hostile ones included. `trickle_s` sends the headers (with a large
    Content-Length), then one byte every `trickle_s` seconds until the client hangs up;
    `delay_s` waits before answering at all."""

    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    trickle_s: float | None = None
    delay_s: float = 0.0
    headers: Mapping[str, str] = field(default_factory=dict)


def json_reply(payload: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> Reply:
    return Reply(status=status, body=json.dumps(payload).encode(), headers=dict(headers or {}))


def error_reply(status: int, message: str, kind: str = "invalid_request_error") -> Reply:
    """An OpenAI-style error body."""
    return json_reply({"error": {"message": message, "type": kind, "param": None, "code": None}}, status)


def chat_reply(message: dict[str, Any], finish_reason: str = "stop") -> Reply:
    """A minimal chat.completion carrying `message`."""
    payload = {"id": "r", "object": "chat.completion", "created": 0, "model": "m",
               "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}]}  # fmt: skip
    return json_reply(payload)


def _json_object(raw: bytes) -> dict[str, Any] | None:
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    return body if isinstance(body, dict) else None


class ScriptedServer:
    """A real HTTP server on 127.0.0.1:<ephemeral> whose answers a subclass scripts."""

    url_path: ClassVar[str] = "/v1"  # what `url` ends with: the base URL a client is given
    protocol_version: ClassVar[str] = "HTTP/1.0"

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.authorizations: list[str | None] = []
        self.methods: list[str] = []  # every request's method, in order
        self.lock = threading.Lock()
        self.closed = threading.Event()  # ends trickles when the server stops
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = owner.protocol_version

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                with owner.lock:
                    owner.authorizations.append(self.headers.get("Authorization"))
                    owner.methods.append("GET")
                owner._send(self, owner.get(self.path))

            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                body = _json_object(raw)
                with owner.lock:
                    owner.authorizations.append(self.headers.get("Authorization"))
                    owner.paths.append(self.path)
                    owner.methods.append("POST")
                    if body is not None:
                        owner.requests.append(body)
                owner._send(self, owner.post(self.path, self.headers, body, raw))

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}{self.url_path}"
        # A short poll: `close` waits for the serving loop to notice, once per server per test.
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def get(self, path: str) -> Reply:
        """A GET (`/models`, say): no route, as servers without that route answer."""
        return error_reply(404, f"no route {path}")

    def post(self, path: str, headers: Message, body: dict[str, Any] | None, raw: bytes) -> Reply:
        """A POST; `body` is the parsed JSON object, or None when `raw` is not one."""
        raise NotImplementedError

    def _send(self, handler: BaseHTTPRequestHandler, reply: Reply) -> None:
        time.sleep(reply.delay_s)
        try:
            handler.send_response(reply.status)
            handler.send_header("Content-Type", reply.content_type)
            length = 10_000_000 if reply.trickle_s is not None else len(reply.body)
            handler.send_header("Content-Length", str(length))
            for key, value in reply.headers.items():
                handler.send_header(key, value)
            handler.end_headers()
            if reply.trickle_s is None:
                handler.wfile.write(reply.body)
                return
            while not self.closed.is_set():
                handler.wfile.write(b" ")
                handler.wfile.flush()
                self.closed.wait(reply.trickle_s)
        except OSError:  # the client gave up and closed the connection: for a trickle, the point
            pass

    def close(self) -> None:
        self.closed.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)

    def __enter__(self):  # -> Self (3.11): each subclass's own type
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _first(messages: list[Any], role: str) -> str:
    return next(
        (m.get("content") or "" for m in messages if isinstance(m, dict) and m.get("role") == role), ""
    )


# -- ModelServer: sim:oracle behind the real `openai` client ---------------------------------------

_MARKER = re.compile(r"\[\[(change-argument|extra-call|worked-trace)\s*([^\]]*)\]\]")


class ModelServer(ScriptedServer):
    """/v1/chat/completions answered as sim:oracle for `domain`'s suite (a declarative domain
    directory, with `cases` instead of its own; default: retail).

    Scripted failures: `failures` is a list of statuses returned (in order) before the first
    success; instructions in `always_fail` get 500 forever. Error bodies echo the Authorization
    header, like a careless proxy would, to prove we never repeat them. `override(body)` may
    return a `Reply` to send instead of the simulator's answer. GET /models answers 404, as
    servers without that route do.

    A system prompt (`traceladder run --system-prompt FILE`) may hold a marker that changes the
    golden answers:
    * `[[change-argument TOOL KEY VALUE]]`: every TOOL call sends KEY=VALUE (JSON) instead;
    * `[[extra-call TOOL ARGS]]`: after the golden calls, one more call TOOL with ARGS (JSON);
    * `[[worked-trace]]`: seed 2's worked flight trace for every case that searches and books —
      two searches with the date one day off (one per turn), then the booking with an extra `seat`.
    """

    def __init__(
        self,
        domain: Path | None = None,
        cases: Path | None = None,
        *,
        failures: list[int] | None = None,
        always_fail: set[str] | None = None,
        override: Callable[[dict[str, Any]], Reply | None] | None = None,
    ) -> None:
        from traceladder.produce.agent.sim import SimModel, SimSpec
        from traceladder.suite.cases import load_cases

        if domain is None:
            from traceladder.suite.domain.retail import load_retail_domain

            loaded = load_retail_domain()
        else:
            from traceladder.suite.domain.declarative import load_directory

            loaded = load_directory(domain)
        self.sim = SimModel(SimSpec("oracle", frozenset()), load_cases(loaded, cases), loaded)
        self.failures = list(failures or [])
        self.always_fail = always_fail or set()
        self.override = override
        super().__init__()

    def post(self, path: str, headers: Message, body: dict[str, Any] | None, raw: bytes) -> Reply:
        assert body is not None, raw[:200]
        with self.lock:
            failure = self.failures.pop(0) if self.failures else None
        scripted = self.override(body) if self.override else None
        if scripted is not None:
            return scripted
        if _first(body["messages"], "user") in self.always_fail:
            failure = 500
        if failure:
            echo = {"error": {"message": f"upstream failed for {headers.get('Authorization')}"}}
            return json_reply(echo, failure, {"Retry-After": "0"})
        status, payload, extra = self.sim.respond(body)
        if status == 200:
            payload = self._marked(body, payload)
        return json_reply(payload, status, extra)

    def _marked(self, body: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
        found = _MARKER.search(_first(body["messages"], "system"))
        if not found:
            return payload
        mode, arg = found.group(1), found.group(2).strip()
        payload = copy.deepcopy(payload)
        message = payload["choices"][0]["message"]
        turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
        if mode == "change-argument":
            tool, key, value = arg.split(" ", 2)
            for call in message.get("tool_calls") or []:
                if call["function"]["name"] == tool:
                    args = json.loads(call["function"]["arguments"])
                    args[key] = json.loads(value)
                    call["function"]["arguments"] = json.dumps(args)
        elif mode == "extra-call" and not message.get("tool_calls"):
            tool, args = arg.split(" ", 1)
            if not any(
                m["role"] == "tool" and m.get("tool_call_id") == "call_extra" for m in body["messages"]
            ):
                message["tool_calls"] = [{"id": "call_extra", "type": "function",
                                          "function": {"name": tool, "arguments": args}}]  # fmt: skip
                message["content"] = None
                payload["choices"][0]["finish_reason"] = "tool_calls"
        elif mode == "worked-trace":
            return self._worked_trace(body, payload, turn)
        return payload

    def _worked_trace(self, body: dict[str, Any], payload: dict[str, Any], turn: int) -> dict[str, Any]:
        case = self.sim._by_instruction[_first(body["messages"], "user")]
        if [c.tool for c in case.calls] != ["search_flights", "book_flight"]:
            return payload
        search, book = case.calls
        wrong = dict(search.params, date=str(date.fromisoformat(search.params["date"]) + timedelta(days=1)))
        script = [
            ("search_flights", wrong),
            ("search_flights", wrong),
            ("book_flight", dict(book.params, seat="12A")),
        ]
        message: dict[str, Any]
        if turn < len(script):
            tool, args = script[turn]
            message = {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"call_{turn}", "type": "function", "function": {"name": tool, "arguments": json.dumps(args)}}]}  # fmt: skip
            finish = "tool_calls"
        else:
            message, finish = {"role": "assistant", "content": "Booked."}, "stop"
        payload["choices"] = [{"index": 0, "message": message, "finish_reason": finish}]
        return payload


# -- JudgeServer: an LLM judge for rung 5 ---------------------------------------------------------

OPPOSITE = {"pass": "fail", "fail": "pass"}


class JudgeServer(ScriptedServer):
    """A judge that records the trajectory of every request (`trajectories`, refused ones
    included) and answers by `mode`:

    * `pass` — every criterion asked passes;
    * `garbage` — prose, never JSON (an unparsable judge);
    * `garbage_once` — prose for the first request about a trajectory, a valid pass after;
    * `html` — an HTML page with status 200;
    * `plain` — refuses `response_format` and `seed` with a 400 naming the field (as some servers
      do), then answers like `pass`;
    * `unauthorized` — 401 to every request, `/models` included (a key the server refuses);
    * `labels` / `flip` / `flip_every_other` — the labels of the meta-evaluation item whose
      trajectory it was shown (`labels` maps canonical trajectory text → labels): as labelled,
      always the opposite, or the opposite on every second request about the same item.
    """

    def __init__(self, mode: str = "pass", labels: dict[str, dict[str, str]] | None = None) -> None:
        self.mode, self.labels = mode, labels or {}
        self.trajectories: list[dict[str, Any]] = []
        self.seen: Counter[str] = Counter()
        super().__init__()

    def get(self, path: str) -> Reply:
        return json_reply({"object": "list", "data": []}, 401 if self.mode == "unauthorized" else 200)

    def post(self, path: str, headers: Message, body: dict[str, Any] | None, raw: bytes) -> Reply:
        assert body is not None, raw[:200]
        system, text = _first(body["messages"], "system"), _first(body["messages"], "user")
        asked = re.findall(r'^- "([^"]+)":', system, re.MULTILINE)
        with self.lock:
            self.trajectories.append(json.loads(text))
            self.seen[text] += 1
            nth = self.seen[text]
        if self.mode == "unauthorized":
            return json_reply(
                {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}, 401
            )
        for name in ("response_format", "seed") if self.mode == "plain" else ():
            if name in body:
                return json_reply(
                    {"error": {"message": f"Unrecognized request argument supplied: {name}"}}, 400
                )
        if self.mode == "html":
            return Reply(body=b"<html><body>502 Bad Gateway</body></html>", content_type="text/html")
        if self.mode == "garbage" or (self.mode == "garbage_once" and nth == 1):
            return self._completion("I think this agent did a pretty good job overall!")
        verdicts = dict.fromkeys(asked, "pass")
        if self.mode in ("labels", "flip", "flip_every_other"):
            labels = self.labels[text]
            flip = self.mode == "flip" or (self.mode == "flip_every_other" and nth % 2 == 0)
            verdicts = {c: OPPOSITE[labels[c]] if flip else labels[c] for c in asked}
        reply = {"criteria": {c: {"verdict": v, "reason": f"scripted: {v}"} for c, v in verdicts.items()}}
        return self._completion(json.dumps(reply))

    @staticmethod
    def _completion(content: str) -> Reply:
        return json_reply({
            "id": "chatcmpl-judge", "object": "chat.completion", "created": 1_780_000_000, "model": "judge-1",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        })  # fmt: skip


# -- StatusServer: an endpoint that refuses everything -------------------------------------------


class StatusServer(ScriptedServer):
    """Answers every request (GET and POST) with `status`, which may be changed live."""

    def __init__(self, status: int) -> None:
        self.status = status
        super().__init__()

    def get(self, path: str) -> Reply:
        return json_reply({"error": {"message": f"status {self.status}"}}, self.status)

    def post(self, path: str, headers: Message, body: dict[str, Any] | None, raw: bytes) -> Reply:
        return self.get(path)


# -- OtlpCollector: where a run's spans are also exported -----------------------------------------


class OtlpCollector(ScriptedServer):
    """POST /v1/traces (protobuf); `url` is the OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT)."""

    url_path = ""

    def __init__(self) -> None:
        self.exports: list[ExportTraceServiceRequest] = []
        super().__init__()

    def post(self, path: str, headers: Message, body: dict[str, Any] | None, raw: bytes) -> Reply:
        message = ExportTraceServiceRequest()
        message.ParseFromString(raw)
        with self.lock:
            self.exports.append(message)
        return Reply(content_type="application/x-protobuf")

    def span_names(self) -> list[str]:
        return [
            span.name
            for request in self.exports
            for resource in request.resource_spans
            for scope in resource.scope_spans
            for span in scope.spans
        ]
