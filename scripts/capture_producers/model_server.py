"""Scripted OpenAI-compatible chat-completions server (stdlib only).

Binds 127.0.0.1 on an ephemeral port and replays a fixed script for one scenario:
each POST to ``.../chat/completions`` gets the next turn of the script, either a set of
tool calls (ids, names and *exact* argument strings) or a final text answer. Every
request body is recorded verbatim, so the capture can check what the agent really sent.

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

            def do_POST(self) -> None:  # noqa: N802 - stdlib name
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
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
