"""What was said in each trace, read by convention from the rows storage holds of it
(`exchange.ExchangeRows`): the instruction and final answer (what the judge needs), and the whole
exchange in order (what the HTML report shows a reviewer and `cases from-traces` records).

Pure: rows in, data out. It runs when a trace is judged or shown, over the stored spans, so a
fix here reaches every store at once, with no reindex (decision 440).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from traceladder.exchange import Exchange, ExchangeCall, ExchangeDetail, ExchangeRows, Message, Response
from traceladder.extract.conventions.answers import (
    SYSTEM_EVENTS,
    SYSTEM_INSTRUCTIONS,
    USER_EVENTS,
    event_opening,
    exchange,
    opening,
    response_text,
    turn_message,
)
from traceladder.instrumentation import semconv as sc

# What `store.openings.read_message_events` is asked for: the request attribute holding the
# system prompt, read as a system message event would be, and the message events themselves.
OPENING_ATTRIBUTE = SYSTEM_INSTRUCTIONS
OPENING_EVENTS = SYSTEM_EVENTS | USER_EVENTS


def _said(rows: ExchangeRows, trace_id: str) -> tuple[str | None, str | None]:
    """(instruction, final answer): the spans by convention, then the log records, the recorded
    answer first."""
    instruction, answer = exchange([a for _, a in rows.llm.get(trace_id, [])])
    if instruction is None or answer is None:
        from_events = _from_events(rows.events.get(trace_id, []))
        instruction, answer = instruction or from_events[0], answer or from_events[1]
    return instruction, rows.recorded.get(trace_id) or answer


def exchanges(rows: ExchangeRows) -> dict[str, Exchange]:
    """Every asked-for trace's instruction, final answer and root span (None where not recorded)."""
    return {t: Exchange(*_said(rows, t), rows.roots.get(t)) for t in rows.trace_ids}


def turn_messages(rows: ExchangeRows) -> dict[str, str | None]:
    """Every asked-for trace's user message it answers (`answers.turn_message`): a conversation's
    turn's own message, not the dialogue's first (None where no LLM span shows one)."""
    return {t: turn_message([a for _, a in rows.llm.get(t, [])]) for t in rows.trace_ids}


def exchange_details(rows: ExchangeRows) -> dict[str, ExchangeDetail]:
    """Every trace's conversation (traces with nothing said and no call are left out). A call is
    placed under the response whose span made it (`tool_calls.response_span_id`); calls whose
    response is not recorded follow the responses, in their order. `rows` must hold the calls."""
    out = {}
    for trace_id in rows.trace_ids:
        spans = rows.llm.get(trace_id, [])
        instruction, answer = _said(rows, trace_id)
        said = [Message(role, text) for role, text in opening([a for _, a in spans]) if text]
        if instruction and not any(m.text == instruction for m in said):
            said.append(Message("user", instruction))  # the events' user message: no span showed it
        step_of = {span_id: i for i, (span_id, _) in enumerate(spans, 1)}
        responses = [Response(i, response_text(attrs)) for i, (_, attrs) in enumerate(spans, 1)]
        unplaced: list[ExchangeCall] = []
        for span_id, call in rows.calls.get(trace_id, []):
            step = step_of.get(span_id) if span_id is not None else None
            (responses[step - 1].calls if step is not None else unplaced).append(call)
        if unplaced:
            responses.append(Response(None, None, unplaced))
        if said or answer or any(r.text or r.calls for r in responses):
            out[trace_id] = ExchangeDetail(said, responses, answer)
    return out


def event_openings(events: Mapping[str, list[tuple[str, Any]]]) -> dict[str, tuple[str | None, str | None]]:
    """trace → (system prompt, user's request) its message events record (what
    `store.openings.read_message_events` returns for `OPENING_ATTRIBUTE` and `OPENING_EVENTS`);
    traces whose events record neither are left out."""
    out = {}
    for trace_id, found in events.items():
        # the request attribute is read as a system message event would be
        named = [(min(SYSTEM_EVENTS) if name == OPENING_ATTRIBUTE else name, value) for name, value in found]
        system, user = event_opening(named)
        if system is not None or user is not None:
            out[trace_id] = (system, user)
    return out


def _from_events(events: list[tuple[str, object]]) -> tuple[str | None, str | None]:
    """The first user message event's content and the latest choice event's message content."""
    instruction = next(
        (b["content"] for n, b in events if n == sc.EVENT_USER_MESSAGE and isinstance(b, dict)
         and isinstance(b.get("content"), str)), None,
    )  # fmt: skip
    answer = None
    for name, body in reversed(events):
        message = body.get("message") if name == sc.EVENT_CHOICE and isinstance(body, dict) else None
        if isinstance(message, dict) and isinstance(message.get("content"), str) and message["content"]:
            answer = message["content"]
            break
    return instruction, answer
