"""The customer's instruction and the agent's final answer, read from a trace's LLM spans — what
the judge needs besides the calls, for traces that carry no case.

Each convention reads its own message shapes (`Convention.messages`); the first convention with
messages on a span's side speaks for it. The instruction is the first user message of the
earliest request that shows one; the final answer is the text of the latest response that has
text. Total: a producer that records no content gives None, never an error. Producers that keep
the messages off the attributes — in span events (Strands) or log records (OTel GenAI events,
Semantic Kernel) — are read by `event_opening`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from traceladder.extract.conventions import registry
from traceladder.extract.conventions.attribute_values import loads
from traceladder.extract.conventions.base import Messages, Side
from traceladder.instrumentation import semconv as sc


def _messages(attrs: dict[str, Any], side: Side) -> Messages:
    for convention in registry.conventions():
        found = convention.messages(attrs, side)
        if found:
            return found
    return []


def exchange(llm_span_attributes: Sequence[dict[str, Any]]) -> tuple[str | None, str | None]:
    """(instruction, final answer) from the attributes of a trace's LLM spans in start order."""
    instruction = None
    for attrs in llm_span_attributes:
        instruction = next((t for role, t in _messages(attrs, "in") if role == "user" and t), None)
        if instruction:
            break
    answer = None
    for attrs in reversed(llm_span_attributes):
        answer = next(
            (t for role, t in reversed(_messages(attrs, "out")) if role in (None, "assistant") and t), None
        )
        if answer:
            break
    return instruction, answer


def turn_message(llm_span_attributes: Sequence[dict[str, Any]]) -> str | None:
    """The user's message a trace answers: the last user message of the earliest request that
    shows any input. For one turn of a conversation (its history first) that is this turn's
    message, where `exchange` reads the dialogue's first; for a single-turn trace they agree."""
    for attrs in llm_span_attributes:
        found = _messages(attrs, "in")
        if found:
            return next((t for role, t in reversed(found) if role in ("user", "human") and t), None)
    return None


# Roles that speak before the model's first turn; the first other role ends the opening.
_OPENING_ROLES = frozenset({"system", "developer", "user", "human", None})


def opening(llm_span_attributes: Sequence[dict[str, Any]]) -> Messages:
    """The messages the earliest request that shows any sent before the model's first turn — the
    system prompt and the user's messages, (role, text) in order, messages without text left out.
    Later requests repeat them in their histories, so only the earliest one is read."""
    for attrs in llm_span_attributes:
        found = _messages(attrs, "in")
        if not found:
            continue
        out: Messages = []
        for role, text in found:
            if role not in _OPENING_ROLES:
                break
            if text:
                out.append((role, text))
        return out
    return []


def response_text(attrs: dict[str, Any]) -> str | None:
    """The text of one LLM span's response (its assistant messages' text, in order), or None
    when the response carried calls only or its content was not recorded."""
    texts = [t for role, t in _messages(attrs, "out") if role in (None, "assistant") and t]
    return "\n".join(texts) or None


# The OTel GenAI attribute holding a request's system prompt (semantic conventions 1.37+: a list of
# parts), which no convention's `messages` reads: the prompt is not one of the input messages.
SYSTEM_INSTRUCTIONS = sc.SYSTEM_INSTRUCTIONS
# OTel GenAI message events (span events, or log records) that speak before the model's first turn.
SYSTEM_EVENTS = frozenset({sc.EVENT_SYSTEM_MESSAGE})
USER_EVENTS = frozenset({sc.EVENT_USER_MESSAGE})


def message_text(value: Any, depth: int = 0) -> str | None:
    """The text of one message event's content, whatever shape the producer gave it: plain text,
    JSON text of it, a list of parts (`[{"text": …}]` as Strands writes, `{"type": "text",
    "content": …}` as OTel GenAI does) joined by newlines, or an object with `content`/`text`."""
    if depth > 4:
        return None
    if isinstance(value, str):
        if value[:1] in ("[", "{"):
            parsed = loads(value)
            if parsed is not None:
                return message_text(parsed, depth + 1)
        return value or None
    if isinstance(value, list):
        texts = [t for t in (message_text(part, depth + 1) for part in value) if t]
        return "\n".join(texts) or None
    if isinstance(value, dict):
        for key in ("text", "content"):
            if key in value:
                return message_text(value[key], depth + 1)
    return None


def event_opening(events: Sequence[tuple[str, Any]]) -> tuple[str | None, str | None]:
    """(system prompt, user's request) from message events in time order — a span's events
    (`name`, attributes) or log records (`event_name`, body): the first system message's text and
    the first user message's text, each None when no event records it."""
    system = user = None
    for name, payload in events:
        if system is None and name in SYSTEM_EVENTS:
            system = message_text(payload)
        elif user is None and name in USER_EVENTS:
            user = message_text(payload)
        if system is not None and user is not None:
            break
    return system, user
