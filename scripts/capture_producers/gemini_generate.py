"""Gemini API `generateContent` / `streamGenerateContent` for the scripted server (wire_protocols.py).

`POST .../models/{model}:generateContent` answers one `GenerateContentResponse`;
`POST .../models/{model}:streamGenerateContent?alt=sse` the same turn as server-sent events, one
JSON chunk each (no event names). A tool-call turn is one candidate whose `content` (`role:
"model"`) has a `functionCall` part per call, `{id, name, args}` — `args` a JSON **object**
(a protobuf Struct on Google's side), `id` optional on this wire and sent, since the script has
one —, `finishReason: "STOP"`; a text turn `text` parts. Streamed, the text comes in 12-character
pieces and every call whole, in one chunk (Gemini does not stream a call's arguments); the last
chunk has `finishReason` and `usageMetadata`.

Argument text that is not a JSON object cannot be an `args` Struct: what the API does with a call
it cannot form is answer `finishReason: "MALFORMED_FUNCTION_CALL"` with no content, and that is
what goes out (and what `as_sent` records: no call). The capture's agent asks again, as a Gemini
client must, and gets the script's next turn.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from wire_protocols import script_turn, sse

MODEL_VERSION = "gemini-2.5-flash"


# Whether the request is streamed is in its path, not its body, and `wire_protocols.serve` hands
# `reply` the body only: `owns` notes the action for this handler thread, which calls `reply` next.
_seen = threading.local()


def owns(path: str) -> bool:
    action = path.split("?", 1)[0].rsplit(":", 1)[-1]
    _seen.streamed = action == "streamGenerateContent"
    return action in ("generateContent", "streamGenerateContent")


def _args(arguments: str) -> dict[str, Any] | None:
    """The call's `args` object, or None when the text is not a JSON object in `json.dumps` form."""
    try:
        value = json.loads(arguments)
    except ValueError:
        return None
    return value if isinstance(value, dict) and json.dumps(value) == arguments else None


def _malformed(payload: dict[str, Any]) -> bool:
    calls, _ = script_turn(payload)
    return any(_args(c["arguments"]) is None for c in calls)


def _usage(payload: dict[str, Any]) -> dict[str, int]:
    usage = payload["usage"]
    return {"promptTokenCount": usage["prompt_tokens"], "candidatesTokenCount": usage["completion_tokens"],
            "totalTokenCount": usage["total_tokens"]}  # fmt: skip


def _response(payload: dict[str, Any], parts: list[dict[str, Any]] | None, finish: str | None,
              usage: bool = True) -> dict[str, Any]:  # fmt: skip
    candidate: dict[str, Any] = {"index": 0}
    if parts is not None:
        candidate["content"] = {"role": "model", "parts": parts}
    if finish is not None:
        candidate["finishReason"] = finish
    out: dict[str, Any] = {"candidates": [candidate], "modelVersion": MODEL_VERSION,
                           "responseId": payload["id"].removeprefix("chatcmpl-")}  # fmt: skip
    if usage:
        out["usageMetadata"] = _usage(payload)
    return out


def _parts(payload: dict[str, Any]) -> list[dict[str, Any]]:
    calls, text = script_turn(payload)
    if calls:
        return [{"functionCall": {"id": c["id"], "name": c["name"], "args": _args(c["arguments"])}} for c in calls]
    return [{"text": text or ""}]


def _stream(payload: dict[str, Any]) -> bytes:
    if _malformed(payload):
        return sse([(None, _response(payload, None, "MALFORMED_FUNCTION_CALL"))])
    calls, text = script_turn(payload)
    chunks: list[tuple[str | None, dict[str, Any]]] = []
    if calls:
        chunks.append((None, _response(payload, _parts(payload), "STOP")))
    else:
        text = text or ""
        pieces = [text[at : at + 12] for at in range(0, len(text), 12)] or [""]
        for n, piece in enumerate(pieces):
            last = n == len(pieces) - 1
            chunks.append((None, _response(payload, [{"text": piece}], "STOP" if last else None, usage=last)))
    return sse(chunks)


def as_sent(request: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
    """A turn whose call could not be formed went out as MALFORMED_FUNCTION_CALL: no call, no text."""
    if not _malformed(payload):
        return payload
    choice = payload["choices"][0]
    message = {"role": "assistant", "content": None}
    return {**payload, "choices": [{**choice, "message": message, "finish_reason": "malformed_function_call"}]}


def reply(request: dict[str, Any], payload: dict[str, Any]) -> tuple[int, str, bytes]:
    if getattr(_seen, "streamed", False):
        return 200, "text/event-stream", _stream(payload)
    if _malformed(payload):
        return 200, "application/json", json.dumps(_response(payload, None, "MALFORMED_FUNCTION_CALL")).encode()
    return 200, "application/json", json.dumps(_response(payload, _parts(payload), "STOP")).encode()
