"""Chat messages: normalising what OpenAI-compatible servers send back, and rendering history in
the OTel GenAI message format for `gen_ai.input.messages` / `gen_ai.output.messages`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ToolCallRequest:
    """One tool call as the model proposed it, after quirk tolerance.

    `raw_arguments` is the model's exact argument text; when a server sent an object instead of a
    JSON string we serialise it once here, and record that it arrived as an object.
    `call_id` is None only for an agent under test's call executed without the model's call id
    (`case.call_tool(name, arguments)`): its span then names none, and the extraction pairs it
    with the model's call by tool and arguments (`execution_pairing`) instead of by an invented id
    no model call has.
    """

    call_id: str | None
    name: str
    raw_arguments: str
    arguments_were_object: bool


def normalize_tool_calls(tool_calls: Any, step: int, seen_ids: set[str]) -> list[ToolCallRequest]:
    """Tolerate real servers: missing or repeated ids, object arguments, missing names.

    `tool_calls` are the raw `message.tool_calls` entries of a validated response (dicts).
    """
    out: list[ToolCallRequest] = []
    for index, call in enumerate(tool_calls or []):
        function = call.get("function") if isinstance(call.get("function"), dict) else {}
        name = function.get("name")
        name = name if isinstance(name, str) else "" if name is None else json.dumps(name)
        arguments = function.get("arguments")
        was_object = arguments is not None and not isinstance(arguments, str)
        if arguments is None:
            raw = ""
        elif isinstance(arguments, str):
            raw = arguments
        else:
            raw = json.dumps(arguments, ensure_ascii=False)
        given = call.get("id")
        call_id = given if isinstance(given, str) and given else f"call_s{step}_{index}"
        if call_id in seen_ids:  # some servers reuse "call_0" every turn
            call_id = f"{call_id}_s{step}_{index}"
        seen_ids.add(call_id)
        out.append(ToolCallRequest(call_id, name, raw, was_object))
    return out


def response_quirks(
    tool_calls: Any, calls: list[ToolCallRequest], finish_reason: str | None, content: str | None
) -> list[str]:
    """The server deviations `normalize_tool_calls` (and reading the answer) tolerated in one
    response, one entry per occurrence — the values of `traceladder.response.quirks` (see
    `semconv.QUIRKS`). Text next to tool calls is allowed by the API, so it is not one."""
    quirks: list[str] = []
    for raw, call in zip(tool_calls or [], calls, strict=True):
        if call.arguments_were_object:
            quirks.append("arguments_object")
        given = raw.get("id")
        if not (isinstance(given, str) and given):
            quirks.append("call_id_missing")
        elif call.call_id != given:
            quirks.append("call_id_repeated")
    if calls and finish_reason != "tool_calls":
        quirks.append("finish_reason_not_tool_calls")
    if not calls and content is None:
        quirks.append("content_null")
    return quirks


def assistant_message(content: str | None, calls: list[ToolCallRequest]) -> dict[str, Any]:
    """The assistant turn as we send it back in history (ids made unique, arguments as text)."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [
            {
                "id": c.call_id,
                "type": "function",
                "function": {"name": c.name, "arguments": c.raw_arguments},
            }
            for c in calls
        ]
    return message


def _arguments_value(raw: str) -> Any:
    """OTel wants arguments as an object when possible; keep invalid JSON as the raw string."""
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def otel_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI chat history → OTel GenAI `InputMessages` (role + typed parts)."""
    out = []
    for m in messages:
        parts: list[dict[str, Any]] = []
        if m["role"] == "tool":
            parts.append(
                {
                    "type": "tool_call_response",
                    "id": m.get("tool_call_id"),
                    "response": m.get("content"),
                }
            )
        else:
            if m.get("content"):
                parts.append({"type": "text", "content": m["content"]})
            for call in m.get("tool_calls", []):
                fn = call["function"]
                parts.append(
                    {
                        "type": "tool_call",
                        "id": call["id"],
                        "name": fn["name"],
                        "arguments": _arguments_value(fn["arguments"]),
                    }
                )
        out.append({"role": m["role"], "parts": parts})
    return out


def otel_output(
    content: str | None, calls: list[ToolCallRequest], finish_reason: str | None
) -> list[dict[str, Any]]:
    message = otel_messages([assistant_message(content, calls)])[0]
    message["finish_reason"] = finish_reason or ""
    return [message]


def otel_tool_definitions(tools: tuple[dict[str, Any], ...]) -> list[dict[str, Any]]:
    """OpenAI nested tool format → the flat OTel `{type, name, description, parameters}`."""
    return [
        {
            "type": "function",
            "name": t["function"]["name"],
            "description": t["function"].get("description"),
            "parameters": t["function"].get("parameters"),
        }  # fmt: skip
        for t in tools
    ]


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
