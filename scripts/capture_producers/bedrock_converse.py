"""Amazon Bedrock Converse (`POST /model/<modelId>/converse`, `.../converse-stream`) for the
scripted server (wire_protocols.py), what boto3's `bedrock-runtime` client calls with
`endpoint_url` at the server.

A tool-call turn is `output.message.content` blocks `{"toolUse": {"toolUseId", "name", "input"}}`
with `stopReason: "tool_use"`; a text turn one `{"text"}` block, `stopReason: "end_turn"`.
`input` is a JSON *document*: the script's argument text is sent parsed. Text that does not parse
(the invalid_json scenario) cannot be an object: it is sent as a document **string** (plain) or —
as the API really delivers arguments — as the `contentBlockDelta` `toolUse.input` string pieces of
a stream, whose concatenation is the text byte-for-byte.

`converse-stream` answers in AWS's binary event-stream framing
(`application/vnd.amazon.eventstream`, what `botocore.eventstream` decodes): each message is a
prelude (total length, headers length, CRC32 of both), string headers `:event-type`,
`:content-type`, `:message-type`, the event's JSON payload and a CRC32 of the whole. Events:
`messageStart`, per block `contentBlockStart` (tool blocks only), `contentBlockDelta`
(`toolUse.input` 7-character pieces or `text` 12-character pieces), `contentBlockStop`, then
`messageStop` (stopReason) and `metadata` (usage, metrics).
"""

from __future__ import annotations

import json
import struct
import zlib
from typing import Any

from wire_protocols import script_turn

NEEDS_PATH = True  # converse vs converse-stream is in the path


def owns(path: str) -> bool:
    tail = path.rstrip("/").rsplit("/", 1)[-1]
    return path.startswith("/model/") and tail in ("converse", "converse-stream")


def _streaming(path: str) -> bool:
    return path.rstrip("/").endswith("/converse-stream")


def _input(arguments: str) -> Any:
    try:
        value = json.loads(arguments)
    except ValueError:
        return arguments
    return value if json.dumps(value) == arguments else arguments


def _usage(payload: dict[str, Any]) -> dict[str, int]:
    usage = payload["usage"]
    return {
        "inputTokens": usage["prompt_tokens"],
        "outputTokens": usage["completion_tokens"],
        "totalTokens": usage["total_tokens"],
    }


def message(payload: dict[str, Any]) -> dict[str, Any]:
    """The Converse response of one script turn."""
    calls, text = script_turn(payload)
    if calls:
        content = [{"toolUse": {"toolUseId": c["id"], "name": c["name"], "input": _input(c["arguments"])}}
                   for c in calls]  # fmt: skip
    else:
        content = [{"text": text or ""}]
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": "tool_use" if calls else "end_turn",
        "usage": _usage(payload),
        "metrics": {"latencyMs": 1},
    }


def _header(name: str, value: str) -> bytes:
    raw_name, raw_value = name.encode(), value.encode()
    return struct.pack("!B", len(raw_name)) + raw_name + struct.pack("!BH", 7, len(raw_value)) + raw_value


def frame(event_type: str, data: dict[str, Any]) -> bytes:
    """One event-stream message (the framing `botocore.eventstream.EventStreamBuffer` decodes)."""
    headers = (
        _header(":event-type", event_type)
        + _header(":content-type", "application/json")
        + _header(":message-type", "event")
    )
    payload = json.dumps(data).encode()
    total = 12 + len(headers) + len(payload) + 4
    prelude = struct.pack("!II", total, len(headers))
    prelude += struct.pack("!I", zlib.crc32(prelude))
    body = prelude + headers + payload
    return body + struct.pack("!I", zlib.crc32(body))


def _stream(payload: dict[str, Any]) -> bytes:
    calls, text = script_turn(payload)
    out = [frame("messageStart", {"role": "assistant"})]
    if calls:
        for index, call in enumerate(calls):
            start = {"toolUse": {"toolUseId": call["id"], "name": call["name"]}}
            out.append(frame("contentBlockStart", {"contentBlockIndex": index, "start": start}))
            arguments = call["arguments"]  # the script's text, also when it does not parse
            for at in range(0, len(arguments), 7):
                delta = {"toolUse": {"input": arguments[at : at + 7]}}
                out.append(frame("contentBlockDelta", {"contentBlockIndex": index, "delta": delta}))
            out.append(frame("contentBlockStop", {"contentBlockIndex": index}))
    else:
        body = text or ""
        for at in range(0, len(body), 12):
            out.append(frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": body[at : at + 12]}}))
        out.append(frame("contentBlockStop", {"contentBlockIndex": 0}))
    out.append(frame("messageStop", {"stopReason": "tool_use" if calls else "end_turn"}))
    out.append(frame("metadata", {"usage": _usage(payload), "metrics": {"latencyMs": 1}}))
    return b"".join(out)


def as_sent(request: dict[str, Any], payload: dict[str, Any], path: str = "") -> dict[str, Any]:
    """What went out, as argument text: plain, `input`'s JSON (for text that does not parse, the
    JSON *string* holding it); streamed, the `toolUse.input` pieces joined — the script's text."""
    if _streaming(path):
        return payload
    message_ = payload["choices"][0]["message"]
    calls = [
        {**c, "function": {**c["function"], "arguments": json.dumps(_input(c["function"]["arguments"]))}}
        for c in message_.get("tool_calls") or []
    ]
    if not calls:
        return payload
    return {**payload, "choices": [{**payload["choices"][0], "message": {**message_, "tool_calls": calls}}]}


def reply(request: dict[str, Any], payload: dict[str, Any], path: str = "") -> tuple[int, str, bytes]:
    if _streaming(path):
        return 200, "application/vnd.amazon.eventstream", _stream(payload)
    return 200, "application/json", json.dumps(message(payload)).encode()
