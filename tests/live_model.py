"""A scripted OpenAI-compatible chat-completions server for live-evaluation tests (stdlib only).

`LiveModel()` binds 127.0.0.1 on an ephemeral port and answers `POST …/chat/completions` in a
thread per connection; `.url` is the base URL for `openai.OpenAI(base_url=…)`; use it as a context
manager or call `.close()`.

Every answer is decided by the request alone (the server keeps no conversation state), so reruns
and concurrent agents get identical answers:

* **version** — the `X-Retail-Model-Version` header if the request has one, else the model name:
  `model="retail-1.0"` / `model="retail-1.1"`. Anything else is a 400.
* **conversation number** — the first `#N` in the first user message (`"… (conversation #3)"`).
* **turn** — the number of assistant messages already in `messages`.

Script (`plan(version, conversation)`, also what tests compare the stored calls with):

* every conversation starts with `get_order {"order_id": "W123"}`;
* version 1.1 ships a broken tool schema on half the traffic: in odd-numbered conversations its
  `get_order` call is `{"orderId": "W123"}` (wrong parameter name); the rest is as in 1.0;
* conversations whose number is a multiple of 3 (both versions) go on with a cancel → confirm chain:
  `cancel_order {"order_id": "W123", "reason": "no_longer_needed"}`, then
  `confirm_action {"action_id": "act-W123-cancel"}`;
* then a text answer (`finish_reason` "stop"). Tool turns have `finish_reason` "tool_calls".

Tool call ids are `call_<v>_<conversation>_<turn>` (v = version without the dot), response ids
`chatcmpl-live-<v>-<conversation>-<turn>`, `created` is fixed and `usage` is set.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

VERSIONS = ("1.0", "1.1")
VERSION_HEADER = "X-Retail-Model-Version"
CREATED = 1760000000
ORDER_ID = "W123"
ACTION_ID = f"act-{ORDER_ID}-cancel"
CANCEL_REASON = "no_longer_needed"


def model_name(version: str) -> str:
    return f"retail-{version}"


def is_broken(version: str, conversation: int) -> bool:
    """Version 1.1 names get_order's parameter `orderId` in odd-numbered conversations."""
    return version == "1.1" and conversation % 2 == 1


def has_chain(conversation: int) -> bool:
    return conversation % 3 == 0


def _args(value: dict[str, Any]) -> str:
    return json.dumps(value)


def plan(version: str, conversation: int) -> list[tuple[str, str]]:
    """(tool name, argument string) of every call the model makes in a conversation, in order."""
    key = "orderId" if is_broken(version, conversation) else "order_id"
    calls = [("get_order", _args({key: ORDER_ID}))]
    if has_chain(conversation):
        calls.append(("cancel_order", _args({"order_id": ORDER_ID, "reason": CANCEL_REASON})))
        calls.append(("confirm_action", _args({"action_id": ACTION_ID})))
    return calls


def final_text(version: str, conversation: int) -> str:
    if has_chain(conversation):
        return f"Order {ORDER_ID} is cancelled."
    return f"Order {ORDER_ID} is pending and ships tomorrow."


def call_id(version: str, conversation: int, turn: int) -> str:
    return f"call_{version.replace('.', '')}_{conversation}_{turn}"


class BadRequest(ValueError):
    pass


def _version(model: Any, header: str | None) -> str:
    if header:
        version = header.strip()
    elif isinstance(model, str) and model.startswith("retail-"):
        version = model.removeprefix("retail-")
    else:
        raise BadRequest(f"unknown model {model!r}; use one of {[model_name(v) for v in VERSIONS]}")
    if version not in VERSIONS:
        raise BadRequest(f"unknown model version {version!r}; known: {list(VERSIONS)}")
    return version


def _conversation(messages: list[Any]) -> int:
    for m in messages:
        if isinstance(m, dict) and m.get("role") == "user" and isinstance(m.get("content"), str):
            found = re.search(r"#(\d+)", m["content"])
            if found:
                return int(found.group(1))
            break
    raise BadRequest("the first user message names no conversation number (#N)")


def respond(body: dict[str, Any], version_header: str | None = None) -> dict[str, Any]:
    """The chat.completions response to one request body."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise BadRequest("messages must be a list")
    version = _version(body.get("model"), version_header)
    conversation = _conversation(messages)
    turn = sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")
    calls = plan(version, conversation)
    if turn < len(calls):
        name, arguments = calls[turn]
        tool_call = {
            "id": call_id(version, conversation, turn),
            "type": "function",
            "function": {"name": name, "arguments": arguments},
        }
        message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [tool_call]}
        finish = "tool_calls"
    elif turn == len(calls):
        message = {"role": "assistant", "content": final_text(version, conversation)}
        finish = "stop"
    else:
        raise BadRequest(f"conversation #{conversation} has no turn {turn + 1}")
    prompt_tokens = 60 + 25 * len(messages)
    completion_tokens = 12 + 3 * turn
    return {
        "id": f"chatcmpl-live-{version.replace('.', '')}-{conversation}-{turn}",
        "object": "chat.completion",
        "created": CREATED,
        "model": model_name(version),
        "system_fingerprint": f"fp_retail_{version.replace('.', '')}",
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


class LiveModel:
    """The scripted model on 127.0.0.1:<ephemeral>; `requests` records every body received."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        owner = self

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

            def _error(self, status: int, message: str, kind: str) -> None:
                self._send(status, {"error": {"message": message, "type": kind, "param": None, "code": None}})

            def do_POST(self) -> None:  # noqa: N802 - stdlib name
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._error(404, f"no route {self.path}", "invalid_request_error")
                    return
                try:
                    body = json.loads(raw)
                    if not isinstance(body, dict):
                        raise BadRequest("the body must be a JSON object")
                    with owner._lock:
                        owner.requests.append(body)
                    payload = respond(body, self.headers.get(VERSION_HEADER))
                except (BadRequest, json.JSONDecodeError) as exc:
                    self._error(400, str(exc), "invalid_request_error")
                    return
                self._send(200, payload)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="live-model", daemon=True
        )
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> LiveModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
