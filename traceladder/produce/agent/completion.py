"""Reading a chat-completions response body, trusting nothing about it.

Model servers answer 200 with HTML error pages, empty or truncated bodies, invalid UTF-8,
`choices: []`, no `choices` at all or `[null]`. The `openai` client passes several of these through
as a plain string or a half-empty object, which an agent loop then reads as "the model made no
calls" — and a "don't call" case passes. So the loop never reads the client's parsed object:
it parses the raw body here, and every way of not getting a usable answer is an
`InvalidResponse` with a precise, stable error type that becomes an AGENT_ERROR.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from traceladder.text import utf8_safe

# finish_reason values meaning the output was cut off: the calls or the answer are incomplete.
TRUNCATED = frozenset({"length", "max_tokens"})
_SNIPPET = 80


class InvalidResponse(Exception):
    """The server answered, but not with a usable chat completion.

    `error_type` is one of: response_empty, response_not_utf8, response_not_json,
    response_no_choices, response_invalid_choice, response_truncated.
    """

    def __init__(self, error_type: str, message: str) -> None:
        super().__init__(message)
        self.error_type = error_type


@dataclass(frozen=True)
class Completion:
    """The parts of one validated response the loop uses. `tool_calls` are the raw entries."""

    response_id: str
    model: str
    content: str | None
    tool_calls: tuple[dict[str, Any], ...]
    finish_reason: str | None
    input_tokens: int
    output_tokens: int


def _snippet(body: bytes) -> str:
    """The start of a body for an error message, printable characters only."""
    text = body[:_SNIPPET].decode("utf-8", "replace")
    return "".join(ch if ch.isprintable() else "?" for ch in text)


def _storable(value: Any) -> Any:
    """The choice with every string UTF-8-safe: a model may send lone surrogates as JSON escapes,
    and text that cannot be encoded cannot be recorded (or exported over OTLP) at all."""
    if isinstance(value, str):
        return utf8_safe(value)
    if isinstance(value, list):
        return [_storable(v) for v in value]
    if isinstance(value, dict):
        return {utf8_safe(str(k)): _storable(v) for k, v in value.items()}
    return value


def _count(usage: Any, key: str) -> int:
    value = usage.get(key) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def parse_completion(body: bytes, content_type: str | None) -> Completion:
    """Validate and read one 2xx chat-completions body; raises `InvalidResponse`."""
    if not body.strip():
        raise InvalidResponse("response_empty", "the server answered with an empty body")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidResponse("response_not_utf8", f"the response body is not UTF-8 ({exc.reason})") from None
    try:
        payload = json.loads(text)
    except (ValueError, RecursionError):
        kind = content_type or "no content type"
        raise InvalidResponse(
            "response_not_json", f"the response is not JSON ({kind}): {_snippet(body)!r}"
        ) from None
    if not isinstance(payload, dict):
        raise InvalidResponse(
            "response_not_json", f"the response is JSON but not an object: {_snippet(body)!r}"
        )
    choices = payload.get("choices")
    if not isinstance(choices, list) or not choices:
        raise InvalidResponse("response_no_choices", f"the response has no choices (choices={choices!r})")
    choice = _storable(choices[0])
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise InvalidResponse(
            "response_invalid_choice", f"the first choice has no message object: {str(choice)[:_SNIPPET]!r}"
        )
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        content = json.dumps(content, ensure_ascii=False)  # a list of parts: keep it readable
    calls = message.get("tool_calls")
    if calls is not None and (not isinstance(calls, list) or not all(isinstance(c, dict) for c in calls)):
        raise InvalidResponse("response_invalid_choice", "message.tool_calls is not a list of objects")
    finish = choice.get("finish_reason")
    finish = finish if isinstance(finish, str) else None
    if finish in TRUNCATED:
        raise InvalidResponse(
            "response_truncated",
            f"the output was cut off (finish_reason={finish!r}); raise --max-tokens or shorten the task",
        )
    usage = payload.get("usage")
    return Completion(
        response_id=str(payload.get("id") or ""),
        model=str(payload.get("model") or ""),
        content=content,
        tool_calls=tuple(calls or ()),
        finish_reason=finish,
        input_tokens=_count(usage, "prompt_tokens"),
        output_tokens=_count(usage, "completion_tokens"),
    )
