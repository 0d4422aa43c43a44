"""Anthropic Messages API (`POST /v1/messages`) for the scripted server (wire_protocols.py).

A tool-call turn is `content` blocks `{"type": "tool_use", "id", "name", "input"}` with
`stop_reason: "tool_use"`; a text turn one `text` block, `stop_reason: "end_turn"`. `input` is a
JSON **object** on this wire: the script's argument text is sent parsed. Text that does not parse
(the invalid_json scenario) cannot be an object: it is sent as the raw **string** in `input`
(plain), or — which is how the API can really deliver it — as the `input_json_delta` pieces of a
stream, whose concatenation is the text byte-for-byte. `"stream": true` gets Anthropic's event
stream: `message_start`, per block `content_block_start`, `content_block_delta`
(`input_json_delta` 7-character `partial_json` pieces, or `text_delta` 12-character pieces),
`content_block_stop`, then `message_delta` (stop_reason, usage) and `message_stop`.
"""

from __future__ import annotations

import json
from typing import Any

from wire_protocols import script_turn, sse

MODEL = "claude-sonnet-4-5-20250929"


def owns(path: str) -> bool:
    return path.rstrip("/").endswith("/messages")


def _input(arguments: str) -> Any:
    try:
        value = json.loads(arguments)
    except ValueError:
        return arguments
    return value if json.dumps(value) == arguments else arguments


def message(payload: dict[str, Any]) -> dict[str, Any]:
    calls, text = script_turn(payload)
    turn = payload["id"].removeprefix("chatcmpl-")
    if calls:
        content = [{"type": "tool_use", "id": c["id"], "name": c["name"], "input": _input(c["arguments"])}
                   for c in calls]  # fmt: skip
    else:
        content = [{"type": "text", "text": text or ""}]
    usage = payload["usage"]
    return {
        "id": f"msg_{turn}",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": content,
        "stop_reason": "tool_use" if calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": usage["prompt_tokens"], "output_tokens": usage["completion_tokens"]},
    }


def _stream(payload: dict[str, Any]) -> bytes:
    whole = message(payload)
    calls, _ = script_turn(payload)
    events: list[tuple[str | None, dict[str, Any]]] = []

    def emit(kind: str, **data: Any) -> None:
        events.append((kind, {"type": kind, **data}))

    start = {**whole, "content": [], "stop_reason": None,
             "usage": {"input_tokens": whole["usage"]["input_tokens"], "output_tokens": 1}}  # fmt: skip
    emit("message_start", message=start)
    for index, block in enumerate(whole["content"]):
        if block["type"] == "tool_use":
            emit("content_block_start", index=index, content_block={**block, "input": {}})
            text = calls[index]["arguments"]  # the script's text, also when it does not parse
            for at in range(0, len(text), 7):
                emit("content_block_delta", index=index,
                     delta={"type": "input_json_delta", "partial_json": text[at : at + 7]})  # fmt: skip
        else:
            emit("content_block_start", index=index, content_block={"type": "text", "text": ""})
            text = block["text"]
            for at in range(0, len(text), 12):
                emit("content_block_delta", index=index, delta={"type": "text_delta", "text": text[at : at + 12]})
        emit("content_block_stop", index=index)
    emit("message_delta", delta={"stop_reason": whole["stop_reason"], "stop_sequence": None},
         usage={"output_tokens": whole["usage"]["output_tokens"]})  # fmt: skip
    emit("message_stop")
    return sse(events)


def as_sent(request: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
    """What went out, as argument text: plain, `input`'s JSON (for text that does not parse, the
    JSON *string* holding it); streamed, the `partial_json` pieces joined — the script's text."""
    if request.get("stream"):
        return payload
    message = payload["choices"][0]["message"]
    calls = [
        {**c, "function": {**c["function"], "arguments": json.dumps(_input(c["function"]["arguments"]))}}
        for c in message.get("tool_calls") or []
    ]
    if not calls:
        return payload
    return {**payload, "choices": [{**payload["choices"][0], "message": {**message, "tool_calls": calls}}]}


def reply(request: dict[str, Any], payload: dict[str, Any]) -> tuple[int, str, bytes]:
    if request.get("stream"):
        return 200, "text/event-stream", _stream(payload)
    return 200, "application/json", json.dumps(message(payload)).encode()
