"""OpenAI Responses API (`POST /v1/responses`) for the scripted server (wire_protocols.py).

A tool-call turn is `output` items `{"type": "function_call", "id": "fc_<call id>", "call_id",
"name", "arguments"}` (the script's argument text byte-for-byte); a text turn one `message` item
with an `output_text` part. `"stream": true` gets the Responses event stream the way OpenAI sends
it: `response.created`, `response.in_progress`, per item `response.output_item.added`, the
arguments in 7-character `response.function_call_arguments.delta` pieces (text in 12-character
`response.output_text.delta` pieces), the `.done` events, `response.output_item.done`, and
`response.completed` carrying the whole response. Every event has `sequence_number`.
"""

from __future__ import annotations

import json
from typing import Any

from wire_protocols import script_turn, sse


def owns(path: str) -> bool:
    return path.rstrip("/").endswith("/responses")


def _items(payload: dict[str, Any], turn: str) -> list[dict[str, Any]]:
    calls, text = script_turn(payload)
    if calls:
        return [
            {
                "type": "function_call",
                "id": f"fc_{c['id'] or f'{turn}_{i}'}",
                "call_id": c["id"],
                "name": c["name"],
                "arguments": c["arguments"],
                "status": "completed",
            }
            for i, c in enumerate(calls)
        ]
    return [
        {
            "type": "message",
            "id": f"msg_{turn}",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text or "", "annotations": [], "logprobs": []}],
        }
    ]


def response(request: dict[str, Any], payload: dict[str, Any], status: str = "completed") -> dict[str, Any]:
    turn = payload["id"].removeprefix("chatcmpl-")
    usage = payload["usage"]
    return {
        "id": f"resp_{turn}",
        "object": "response",
        "created_at": payload["created"],
        "status": status,
        "error": None,
        "incomplete_details": None,
        "instructions": request.get("instructions"),
        "max_output_tokens": None,
        "model": payload["model"],
        "output": _items(payload, turn) if status == "completed" else [],
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "reasoning": {"effort": None, "summary": None},
        "store": False,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": request.get("tools") or [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": {
            "input_tokens": usage["prompt_tokens"],
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": usage["completion_tokens"],
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": usage["total_tokens"],
        }
        if status == "completed"
        else None,
        "metadata": {},
    }


def _stream(request: dict[str, Any], payload: dict[str, Any]) -> bytes:
    final = response(request, payload)
    events: list[tuple[str | None, dict[str, Any]]] = []

    def emit(kind: str, **data: Any) -> None:
        events.append((kind, {"type": kind, "sequence_number": len(events), **data}))

    emit("response.created", response=response(request, payload, "in_progress"))
    emit("response.in_progress", response=response(request, payload, "in_progress"))
    for index, item in enumerate(final["output"]):
        if item["type"] == "function_call":
            emit("response.output_item.added", output_index=index,
                 item={**item, "arguments": "", "status": "in_progress"})  # fmt: skip
            text = item["arguments"]
            for start in range(0, len(text), 7):
                emit("response.function_call_arguments.delta", item_id=item["id"], output_index=index,
                     delta=text[start : start + 7])  # fmt: skip
            emit("response.function_call_arguments.done", item_id=item["id"], output_index=index,
                 name=item["name"], arguments=text)  # fmt: skip
        else:
            part = item["content"][0]
            emit("response.output_item.added", output_index=index,
                 item={**item, "content": [], "status": "in_progress"})  # fmt: skip
            emit("response.content_part.added", item_id=item["id"], output_index=index, content_index=0,
                 part={**part, "text": ""})  # fmt: skip
            text = part["text"]
            for start in range(0, len(text), 12):
                emit("response.output_text.delta", item_id=item["id"], output_index=index, content_index=0,
                     delta=text[start : start + 12], logprobs=[])  # fmt: skip
            emit("response.output_text.done", item_id=item["id"], output_index=index, content_index=0,
                 text=text, logprobs=[])  # fmt: skip
            emit("response.content_part.done", item_id=item["id"], output_index=index, content_index=0,
                 part=part)  # fmt: skip
        emit("response.output_item.done", output_index=index, item=item)
    emit("response.completed", response=final)
    return sse(events)


def reply(request: dict[str, Any], payload: dict[str, Any]) -> tuple[int, str, bytes]:
    if request.get("stream"):
        return 200, "text/event-stream", _stream(request, payload)
    return 200, "application/json", json.dumps(response(request, payload)).encode()
