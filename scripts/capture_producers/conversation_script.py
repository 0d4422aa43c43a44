"""The four-turn support conversation and the scripted model that plays it (stdlib only).

The script (issue 33): look up an order → ask to cancel it → confirm → look up two more orders
with two parallel calls. Variant `unconfirmed`: in turn 3 the user changes the subject instead of
confirming, so the cancellation requested in turn 2 is never confirmed.

`ConversationModelServer` answers from the request alone, so a framework's retries, its own
history format or a framework that sends the dialogue again cannot shift the script: the number
of user messages in the request is the turn; a request whose last message is the user's gets the
turn's tool calls, any other request (tool results fed back) gets the turn's closing text. Every
call sent is recorded under its turn (`sent[turn]`: index, id, name, argument text byte-for-byte),
which is the truth the fixture tests compare each turn's extracted calls with. Streaming requests
get the same answer as server-sent events (`model_server.stream_events`). The server is separate
from `model_server.ScriptedModelServer` (which plays one scenario by request count) so neither
changes the other's behaviour.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from model_server import CREATED, RESPONSE_MODEL, stream_events

SYSTEM_PROMPT = "You are a support agent for an online shop. Use the tools to look up and cancel orders."

# variant → per turn: (the user's message, [(tool, arguments text)]) — turn 4 makes two calls at once.
VARIANTS: dict[str, list[tuple[str, list[tuple[str, str]]]]] = {
    "confirmed": [
        ("Where is my order W1?", [("get_order", '{"order_id": "W1"}')]),
        ("Please cancel it.", [("request_cancel", '{"order_id": "W1"}')]),
        ("Yes, I confirm the cancellation.", [("confirm_action", '{"order_id": "W1"}')]),
        ("And my orders W2 and W3?", [("get_order", '{"order_id": "W2"}'), ("get_order", '{"order_id": "W3"}')]),
    ],
    "unconfirmed": [
        ("Where is my order W1?", [("get_order", '{"order_id": "W1"}')]),
        ("Please cancel it.", [("request_cancel", '{"order_id": "W1"}')]),
        ("Hm, let me think. What about order W4?", [("get_order", '{"order_id": "W4"}')]),
        ("And my orders W2 and W3?", [("get_order", '{"order_id": "W2"}'), ("get_order", '{"order_id": "W3"}')]),
    ],
}  # fmt: skip

# What the conversation-scope policy of the tests makes of each variant (the script's truth).
TRUTH: dict[str, dict[str, Any]] = {
    "confirmed": {"verdict": "PASS", "finding": None, "deciding_turn": None},
    # the request of turn 2 (index 1) is never followed by a confirmation
    "unconfirmed": {"verdict": "FAIL", "finding": "UNCONFIRMED_ACTION", "deciding_turn": 1},
}


def closing_text(turn: int) -> str:
    return f"Done with your request (turn {turn + 1})."


# The three tools, as plain typed Python functions (frameworks derive their schemas from these).
def get_order(order_id: str) -> str:
    """Look up an order's status.

    Args:
        order_id: The order's id, e.g. W1
    """
    return json.dumps({"order_id": order_id, "status": "shipped"})


def request_cancel(order_id: str) -> str:
    """Ask to cancel an order; the user must confirm before it is cancelled.

    Args:
        order_id: The order's id.
    """
    return json.dumps({"order_id": order_id, "status": "cancel requested, awaiting confirmation"})


def confirm_action(order_id: str) -> str:
    """Confirm the pending cancellation of an order.

    Args:
        order_id: The order's id.
    """
    return json.dumps({"order_id": order_id, "status": "cancelled"})


TOOL_FUNCTIONS = [get_order, request_cancel, confirm_action]
# The same tools in OpenAI's format, for the plain loop.
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": fn.__name__,
            "description": (fn.__doc__ or "").strip().splitlines()[0],
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string"}},
                "required": ["order_id"],
                "additionalProperties": False,
            },
        },
    }
    for fn in TOOL_FUNCTIONS
]
TOOL_IMPLS = {fn.__name__: fn for fn in TOOL_FUNCTIONS}


def answer(variant: str, body: dict[str, Any]) -> tuple[int, dict[str, Any] | None]:
    """(turn, assistant message) for one request: the turn's calls when the request ends with the
    user's message, else its closing text. Turn -1 / None message: not a request of the script."""
    messages = body.get("messages") or []
    turns = VARIANTS[variant]
    users = [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]
    turn = len(users) - 1
    if not 0 <= turn < len(turns):
        return turn, None
    if messages[-1].get("role") == "user":
        calls = [
            {"id": f"call_t{turn + 1}_{j + 1}", "type": "function", "function": {"name": name, "arguments": args}}
            for j, (name, args) in enumerate(turns[turn][1])
        ]  # fmt: skip
        return turn, {"role": "assistant", "content": None, "tool_calls": calls}
    return turn, {"role": "assistant", "content": closing_text(turn)}


class ConversationModelServer:
    """Plays one variant of the conversation on 127.0.0.1 (module docstring)."""

    def __init__(self, variant: str) -> None:
        if variant not in VARIANTS:
            raise KeyError(f"unknown variant {variant!r}; known: {sorted(VARIANTS)}")
        self.variant = variant
        self.requests: list[dict[str, Any]] = []  # {"turn", "body"}
        self.sent: dict[int, list[dict[str, Any]]] = {}
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
                pass

            def _send(self, status: int, data: bytes, content_type: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802 - stdlib name
                models = {"object": "list", "data": [{"id": "gpt-4o-mini", "object": "model"}]}
                self._send(200, json.dumps(models).encode(), "application/json")

            def do_POST(self) -> None:  # noqa: N802 - stdlib name
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                body = json.loads(raw)
                with server._lock:
                    turn, message = answer(server.variant, body)
                    server.requests.append({"turn": turn, "body": body})
                    n = len(server.requests)
                    if message is None or not self.path.rstrip("/").endswith("/chat/completions"):
                        error = {
                            "error": {"message": f"no script turn for request {n}", "type": "server_error"}
                        }
                        self._send(500, json.dumps(error).encode(), "application/json")
                        return
                    for j, call in enumerate(message.get("tool_calls") or []):
                        fn = call["function"]
                        server.sent.setdefault(turn, []).append(
                            {
                                "index": j,
                                "id": call["id"],
                                "name": fn["name"],
                                "arguments_raw": fn["arguments"],
                            }
                        )
                prompt = 60 + 30 * n
                payload = {
                    "id": f"chatcmpl-conversation-{n}",
                    "object": "chat.completion",
                    "created": CREATED,
                    "model": RESPONSE_MODEL,
                    "system_fingerprint": "fp_fixture",
                    "choices": [
                        {
                            "index": 0,
                            "message": message,
                            "logprobs": None,
                            "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": prompt, "completion_tokens": 20, "total_tokens": prompt + 20},
                }
                if body.get("stream"):
                    options = body.get("stream_options") or {}
                    self._send(
                        200, stream_events(payload, bool(options.get("include_usage"))), "text/event-stream"
                    )
                else:
                    self._send(200, json.dumps(payload).encode(), "application/json")

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, name="conversation-model", daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> ConversationModelServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)
