"""The scripted server's other providers' wire protocols, one module each, beside model_server.py.

`model_server.ScriptedModelServer` speaks OpenAI chat completions itself and hands every other
POST to `serve` here: a protocol module answers the paths it owns with the *same* script turn
(`model_server.build_response`, the chat-completions form, which is what `server.responses`
records and `capture_framework.sent_calls` reads), translated into its provider's wire format,
plain or streamed. So a call's id, tool name and argument text are the script's whatever the
protocol, and the ground truth of a capture does not depend on the provider.

A protocol module defines `owns(path) -> bool` and `reply(request_body, payload) -> (status,
content_type, bytes)`, and `as_sent(request_body, payload)` where its wire cannot carry an
argument text as the script has it (the payload recorded instead, its argument strings the JSON
text the wire really carried); register it in `_MODULES`.
"""

from __future__ import annotations

import importlib
import json
from typing import Any

_MODULES: list[str] = ["responses_api", "anthropic_messages", "gemini_generate"]
_MODULES.append("bedrock_converse")  # streams by path (`NEEDS_PATH`), not by a body flag


def _protocols() -> list[Any]:
    return [importlib.import_module(m) for m in _MODULES]


def serve(handler: Any, server: Any, raw: bytes) -> bool:
    """Answer `handler`'s POST if a protocol module owns its path; False when none does."""
    from model_server import build_response

    protocol = next((p for p in _protocols() if p.owns(handler.path)), None)
    if protocol is None:
        return False
    body = json.loads(raw) if raw else {}
    with server._lock:
        turn_index = len(server.requests)
        server.requests.append({"path": handler.path, "body_raw": raw.decode("utf-8"), "body": body})
        try:
            payload = build_response(server.scenario, turn_index)
        except IndexError as exc:
            status, ctype, data = 500, "application/json", json.dumps({"error": {"message": str(exc)}}).encode()
        else:
            # a protocol that says streaming in its path (Bedrock's converse-stream) is given it
            extra = {"path": handler.path} if getattr(protocol, "NEEDS_PATH", False) else {}
            as_sent = getattr(protocol, "as_sent", None)
            server.responses.append(payload if as_sent is None else as_sent(body, payload, **extra))
            status, ctype, data = protocol.reply(body, payload, **extra)
    handler.send_response(status)
    handler.send_header("Content-Type", ctype)
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)
    return True


def sse(events: list[tuple[str | None, dict[str, Any]]]) -> bytes:
    """Server-sent events: `event:` lines where the provider names them, one JSON `data:` each."""
    out = []
    for name, data in events:
        head = f"event: {name}\n" if name else ""
        out.append(f"{head}data: {json.dumps(data)}\n\n")
    return "".join(out).encode()


def script_turn(payload: dict[str, Any]) -> tuple[list[dict[str, Any]], str | None]:
    """(tool calls as {id, name, arguments}, final text) of one chat-completions payload."""
    message = payload["choices"][0]["message"]
    calls = [
        {"id": c.get("id"), "name": c["function"]["name"], "arguments": c["function"]["arguments"]}
        for c in message.get("tool_calls") or []
    ]
    return calls, None if calls else message.get("content")
