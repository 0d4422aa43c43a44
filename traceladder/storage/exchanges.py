"""What was said in each trace besides its calls: the instruction, the final answer and the root
span (what the judge needs; the judge's span links to the root), and the whole exchange (what
the HTML report shows a reviewer). Set-based: one query per table for all the traces.

A suite run's `case_runs.final_text` is the answer when there is one (the loop recorded exactly
what it returned); otherwise the trace's LLM spans are read by convention
(`conventions.answers`). Calls and their results are the `tool_calls` read model's, never read
again from spans.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from traceladder.conventions.answers import exchange, opening, response_text, turn_message
from traceladder.instrumentation import semconv as sc
from traceladder.storage.db import Store, trace_id_table

# LLM spans: the role the extraction stage derived (the trace index counts the same spans as model
# turns).
_LLM_SPANS = """
SELECT trace_id, span_id, attributes FROM spans SEMI JOIN wanted_traces USING (trace_id)
WHERE role = 'llm'
ORDER BY trace_id, start_ns, span_id
"""


# The OTel GenAI events (log records) of producers that keep message content off the spans.
_EVENTS = """
SELECT trace_id, event_name, body FROM log_records SEMI JOIN wanted_traces USING (trace_id)
WHERE event_name IN ('gen_ai.user.message', 'gen_ai.choice')
ORDER BY trace_id, time_ns, record_id
"""

_CALLS = """
SELECT trace_id, ordinal, tool_name, arguments_raw, result, status, error_type, response_span_id
FROM tool_calls SEMI JOIN wanted_traces USING (trace_id)
ORDER BY trace_id, ordinal
"""


class Exchange(NamedTuple):
    instruction: str | None
    final_answer: str | None
    root_span_id: str | None


@dataclass(frozen=True)
class Message:
    """One message before the model's first turn: `role` as the producer named it (None: unnamed)."""

    role: str | None
    text: str


@dataclass(frozen=True)
class ExchangeCall:
    """A tool call as the `tool_calls` read model has it: the model's exact argument text and the
    result returned to the model (None when the trace records none)."""

    ordinal: int
    tool: str | None
    arguments_raw: str | None
    result: str | None
    status: str | None
    error_type: str | None


@dataclass(frozen=True)
class Response:
    """One model response: `step` its 1-based place among the trace's LLM spans (None for the calls
    no recorded response shows, e.g. a trace of tool spans only), its text, the calls it made."""

    step: int | None
    text: str | None
    calls: list[ExchangeCall] = field(default_factory=list)


@dataclass(frozen=True)
class ExchangeDetail:
    """A trace's conversation in order: the messages sent before the model's first turn (system
    prompt, the user's request), each model response with its calls and their results, and the
    final answer (which is also the text of the last response when the spans record it)."""

    opening: list[Message] = field(default_factory=list)
    responses: list[Response] = field(default_factory=list)
    final_answer: str | None = None


class _Read(NamedTuple):
    recorded: dict[str, str | None]
    llm: dict[str, list[tuple[str, dict[str, Any]]]]  # (span id, attributes) in start order
    events: dict[str, list[tuple[str, object]]]


def _read(conn: Any) -> _Read:
    recorded = dict(
        conn.execute(
            "SELECT trace_id, max(final_text) FROM case_runs SEMI JOIN wanted_traces USING (trace_id) "
            "GROUP BY trace_id"
        ).fetchall()
    )
    llm: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for trace_id, span_id, attributes in conn.execute(_LLM_SPANS).fetchall():
        try:
            parsed = json.loads(attributes) if attributes else {}
        except ValueError:
            parsed = {}
        llm.setdefault(trace_id, []).append((span_id, parsed if isinstance(parsed, dict) else {}))
    events: dict[str, list[tuple[str, object]]] = {}
    for trace_id, name, body in conn.execute(_EVENTS).fetchall():
        events.setdefault(trace_id, []).append((name, _json(body)))
    return _Read(recorded, llm, events)


def _exchange(read: _Read, trace_id: str) -> tuple[str | None, str | None]:
    """(instruction, final answer): the spans by convention, then the events, the recorded answer
    first."""
    instruction, answer = exchange([a for _, a in read.llm.get(trace_id, [])])
    if instruction is None or answer is None:
        from_events = _from_events(read.events.get(trace_id, []))
        instruction, answer = instruction or from_events[0], answer or from_events[1]
    return instruction, read.recorded.get(trace_id) or answer


def read_exchanges(store: Store, trace_ids: Sequence[str]) -> dict[str, Exchange]:
    with store.registered("wanted_traces", trace_id_table(trace_ids)) as conn:
        read = _read(conn)
        roots = dict(
            conn.execute(
                "SELECT trace_id, arg_min(span_id, start_ns) FROM spans "
                "SEMI JOIN wanted_traces USING (trace_id) WHERE parent_span_id IS NULL GROUP BY trace_id"
            ).fetchall()
        )
    return {t: Exchange(*_exchange(read, t), roots.get(t)) for t in trace_ids}


def read_turn_messages(store: Store, trace_ids: Sequence[str]) -> dict[str, str | None]:
    """trace → the user's message it answers (`answers.turn_message`): a conversation's turn's
    own message, not the dialogue's first."""
    with store.registered("wanted_traces", trace_id_table(trace_ids)) as conn:
        read = _read(conn)
    return {t: turn_message([a for _, a in read.llm.get(t, [])]) for t in trace_ids}


def read_exchange_details(store: Store, trace_ids: Sequence[str]) -> dict[str, ExchangeDetail]:
    """Every trace's conversation (traces with nothing said and no call are left out). A call is
    placed under the response whose span made it (`tool_calls.response_span_id`); calls whose
    response is not recorded follow the responses, in their order."""
    with store.registered("wanted_traces", trace_id_table(trace_ids)) as conn:
        read = _read(conn)
        calls: dict[str, list[tuple[str | None, ExchangeCall]]] = {}
        for trace_id, ordinal, tool, raw, result, status, error_type, response in conn.execute(
            _CALLS
        ).fetchall():
            call = ExchangeCall(ordinal, tool, raw, result, status, error_type)
            calls.setdefault(trace_id, []).append((response, call))
    out = {}
    for trace_id in trace_ids:
        spans = read.llm.get(trace_id, [])
        instruction, answer = _exchange(read, trace_id)
        said = [Message(role, text) for role, text in opening([a for _, a in spans]) if text]
        if instruction and not any(m.text == instruction for m in said):
            said.append(Message("user", instruction))  # the events' user message: no span showed it
        step_of = {span_id: i for i, (span_id, _) in enumerate(spans, 1)}
        responses = [Response(i, response_text(attrs)) for i, (_, attrs) in enumerate(spans, 1)]
        unplaced: list[ExchangeCall] = []
        for span_id, call in calls.get(trace_id, []):
            step = step_of.get(span_id) if span_id is not None else None
            (responses[step - 1].calls if step is not None else unplaced).append(call)
        if unplaced:
            responses.append(Response(None, None, unplaced))
        if said or answer or any(r.text or r.calls for r in responses):
            out[trace_id] = ExchangeDetail(said, responses, answer)
    return out


def _json(text: str | None) -> object:
    try:
        return json.loads(text) if text else None
    except ValueError:
        return None


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
