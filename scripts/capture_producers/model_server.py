"""Scripted OpenAI-compatible chat-completions server (stdlib only).

Binds 127.0.0.1 on an ephemeral port and replays a fixed script for one scenario:
each POST to ``.../chat/completions`` gets the next turn of the script, either a set of
tool calls (ids, names and *exact* argument strings) or a final text answer. Every
request body is recorded verbatim, so the capture can check what the agent really sent.
A request with ``"stream": true`` gets the same turn as server-sent events (`stream_events`):
tool-call arguments arrive in 7-character pieces, as real servers split them. ``GET .../models``
lists the one model (some frameworks ask first).

Run standalone to eyeball a script::

    python model_server.py parallel      # prints the URL, serves until Ctrl-C
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import wire_protocols

RESPONSE_MODEL = "gpt-4o-mini-2024-07-18"
CREATED = 1760000000  # fixed, so response bodies are byte-identical between captures

# One entry per scenario. A turn is either {"tool_calls": [...]} or {"content": "..."}.
# "arguments" strings are sent byte-for-byte; "id": None means "omit the id key".
SCRIPTS: dict[str, dict[str, Any]] = {
    "parallel": {
        "user": "What's the weather and the local time in Paris? Then book a table for 4 at Chez Nous.",
        "turns": [
            {
                "tool_calls": [
                    {"id": "call_a1", "name": "get_weather", "arguments": '{"location": "Paris"}'},
                    {"id": "call_a2", "name": "get_time", "arguments": '{"city": "Paris"}'},
                ]
            },
            {
                "tool_calls": [
                    {
                        "id": "call_b1",
                        "name": "book_table",
                        "arguments": '{"restaurant": "Chez Nous", "party_size": 4}',
                    }
                ]
            },
            {
                "content": "It is sunny and 22 C in Paris and the local time is 14:05. "
                "I booked a table for 4 at Chez Nous (confirmation BK-1042)."
            },
        ],
    },
    "invalid_json": {
        "user": "What's the weather in Paris?",
        "turns": [
            # arguments deliberately invalid JSON (missing closing brace)
            {"tool_calls": [{"id": "call_c1", "name": "get_weather", "arguments": '{"location": "Paris"'}]},
            {"tool_calls": [{"id": "call_c2", "name": "get_weather", "arguments": '{"location": "Paris"}'}]},
            {"content": "It is sunny and 22 C in Paris."},
        ],
    },
    # The framework scenarios (capture_framework.py) add a sequential chain and a schema violation.
    "chain": {
        "user": "Check the weather in Paris, then the local time there, then book a table for 4 at Chez Nous.",
        "turns": [
            {"tool_calls": [{"id": "call_d1", "name": "get_weather", "arguments": '{"location": "Paris"}'}]},
            {"tool_calls": [{"id": "call_d2", "name": "get_time", "arguments": '{"city": "Paris"}'}]},
            {
                "tool_calls": [
                    {
                        "id": "call_d3",
                        "name": "book_table",
                        "arguments": '{"restaurant": "Chez Nous", "party_size": 4}',
                    }
                ]
            },
            {"content": "Sunny, 22 C, 14:05 in Paris; table for 4 booked at Chez Nous (BK-1042)."},
        ],
    },
    "schema_violation": {
        "user": "Book a table for four at Chez Nous.",
        "turns": [
            # valid JSON, but party_size is a string where the schema says integer
            {
                "tool_calls": [
                    {
                        "id": "call_e1",
                        "name": "book_table",
                        "arguments": '{"restaurant": "Chez Nous", "party_size": "four"}',
                    }
                ]
            },
            {"content": "I could not book the table: the party size was not a number."},
        ],
    },
    "no_ids": {
        "user": "What time is it in Tokyo?",
        "turns": [
            {"tool_calls": [{"id": None, "name": "get_time", "arguments": '{"city": "Tokyo"}'}]},
            {"content": "It is 21:05 in Tokyo."},
        ],
    },
}


def _usage(turn_index: int) -> dict[str, int]:
    prompt = 80 + 40 * turn_index
    completion = 18 + turn_index
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def build_response(scenario: str, turn_index: int) -> dict[str, Any]:
    turns = SCRIPTS[scenario]["turns"]
    if turn_index >= len(turns):
        raise IndexError(f"script {scenario!r} has only {len(turns)} turns; got request #{turn_index + 1}")
    turn = turns[turn_index]
    if "tool_calls" in turn:
        tool_calls = []
        for tc in turn["tool_calls"]:
            call: dict[str, Any] = {}
            if tc["id"] is not None:
                call["id"] = tc["id"]
            call["type"] = "function"
            call["function"] = {"name": tc["name"], "arguments": tc["arguments"]}
            tool_calls.append(call)
        message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": tool_calls}
        finish = "tool_calls"
    else:
        message = {"role": "assistant", "content": turn["content"]}
        finish = "stop"
    return {
        "id": f"chatcmpl-fixture-{scenario}-{turn_index + 1}",
        "object": "chat.completion",
        "created": CREATED,
        "model": RESPONSE_MODEL,
        "system_fingerprint": "fp_fixture",
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": _usage(turn_index),
    }


def stream_events(payload: dict[str, Any], include_usage: bool) -> bytes:
    """The same response as server-sent events, the way OpenAI streams it: a role chunk, each
    tool call opened with its id and name and its arguments in small pieces (clients must
    reassemble them), or the text in pieces, a finish chunk, optionally a usage chunk, [DONE]."""
    choice = payload["choices"][0]
    message = choice["message"]
    base = {k: payload[k] for k in ("id", "created", "model", "system_fingerprint")}
    base["object"] = "chat.completion.chunk"

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}

    chunks = [chunk({"role": "assistant", "content": None if message.get("tool_calls") else ""})]
    for index, call in enumerate(message.get("tool_calls") or []):
        opening: dict[str, Any] = {"index": index, "type": "function"}
        if "id" in call:
            opening["id"] = call["id"]
        opening["function"] = {"name": call["function"]["name"], "arguments": ""}
        chunks.append(chunk({"tool_calls": [opening]}))
        arguments = call["function"]["arguments"]
        for start in range(0, len(arguments), 7):
            piece = {"index": index, "function": {"arguments": arguments[start : start + 7]}}
            chunks.append(chunk({"tool_calls": [piece]}))
    content = message.get("content") or ""
    for start in range(0, len(content), 12):
        chunks.append(chunk({"content": content[start : start + 12]}))
    chunks.append(chunk({}, choice["finish_reason"]))
    if include_usage:
        chunks.append({**base, "choices": [], "usage": payload["usage"]})
    lines = [f"data: {json.dumps(c)}\n\n" for c in chunks] + ["data: [DONE]\n\n"]
    return "".join(lines).encode()


class ScriptedModelServer:
    """Serves one scenario's script; thread-safe request log in ``self.requests``."""

    def __init__(self, scenario: str) -> None:
        if scenario not in SCRIPTS:
            raise KeyError(f"unknown scenario {scenario!r}; known: {sorted(SCRIPTS)}")
        self.scenario = scenario
        self.requests: list[dict[str, Any]] = []  # {"path", "headers", "body_raw", "body"}
        self.responses: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
                pass

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802 - stdlib name
                # some frameworks list models before the first request
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": "gpt-4o-mini", "object": "model"}]})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})

            def _send_stream(self, payload: dict[str, Any], include_usage: bool) -> None:
                data = stream_events(payload, include_usage)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:  # noqa: N802 - stdlib name
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if wire_protocols.serve(self, server, raw):  # another provider's protocol (its module)
                    return
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(
                        404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}}
                    )
                    return
                with server._lock:
                    turn_index = len(server.requests)
                    server.requests.append(
                        {"path": self.path, "body_raw": raw.decode("utf-8"), "body": json.loads(raw)}
                    )
                    try:
                        payload = build_response(server.scenario, turn_index)
                    except IndexError as exc:
                        self._send(500, {"error": {"message": str(exc), "type": "server_error"}})
                        return
                    server.responses.append(payload)
                request = server.requests[-1]["body"]
                if isinstance(request, dict) and request.get("stream"):
                    options = request.get("stream_options") or {}
                    self._send_stream(payload, bool(options.get("include_usage")))
                else:
                    self._send(200, payload)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="model-server", daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> ScriptedModelServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


if __name__ == "__main__":
    with ScriptedModelServer(sys.argv[1] if len(sys.argv) > 1 else "parallel") as srv:
        print(srv.base_url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()
