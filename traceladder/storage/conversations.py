"""What the judge reads of each trace besides its calls: the instruction, the final answer and the
root span (the judge's span links to it). Set-based: one query per table for all the traces.

A suite run's `case_runs.final_text` is the answer when there is one (the loop recorded exactly
what it returned); otherwise the trace's LLM spans are read by convention
(`conventions.answers`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import NamedTuple

from traceladder.conventions.answers import exchange
from traceladder.conventions.registry import llm_span_sql
from traceladder.instrumentation import semconv as sc
from traceladder.storage.db import Store, trace_id_table

# LLM spans by the conventions' one rule (the trace index counts the same spans as model turns).
_LLM_SPANS = """
SELECT trace_id, attributes FROM spans SEMI JOIN wanted_traces USING (trace_id)
WHERE {llm_spans}
ORDER BY trace_id, start_ns, span_id
"""


# The OTel GenAI events (log records) of producers that keep message content off the spans.
_EVENTS = """
SELECT trace_id, event_name, body FROM log_records SEMI JOIN wanted_traces USING (trace_id)
WHERE event_name IN ('gen_ai.user.message', 'gen_ai.choice')
ORDER BY trace_id, time_ns, record_id
"""


class Exchange(NamedTuple):
    instruction: str | None
    final_answer: str | None
    root_span_id: str | None


def read_exchanges(store: Store, trace_ids: Sequence[str]) -> dict[str, Exchange]:
    with store.registered("wanted_traces", trace_id_table(trace_ids)) as conn:
        recorded = dict(
            conn.execute(
                "SELECT trace_id, max(final_text) FROM case_runs SEMI JOIN wanted_traces USING (trace_id) "
                "GROUP BY trace_id"
            ).fetchall()
        )
        roots = dict(
            conn.execute(
                "SELECT trace_id, arg_min(span_id, start_ns) FROM spans "
                "SEMI JOIN wanted_traces USING (trace_id) WHERE parent_span_id IS NULL GROUP BY trace_id"
            ).fetchall()
        )
        llm: dict[str, list[dict[str, object]]] = {}
        for trace_id, attributes in conn.execute(
            _LLM_SPANS.replace("{llm_spans}", llm_span_sql())
        ).fetchall():
            try:
                parsed = json.loads(attributes) if attributes else {}
            except ValueError:
                parsed = {}
            llm.setdefault(trace_id, []).append(parsed if isinstance(parsed, dict) else {})
        events: dict[str, list[tuple[str, object]]] = {}
        for trace_id, name, body in conn.execute(_EVENTS).fetchall():
            events.setdefault(trace_id, []).append((name, _json(body)))
    out = {}
    for trace_id in trace_ids:
        instruction, answer = exchange(llm.get(trace_id, []))
        if instruction is None or answer is None:
            from_events = _from_events(events.get(trace_id, []))
            instruction, answer = instruction or from_events[0], answer or from_events[1]
        out[trace_id] = Exchange(instruction, recorded.get(trace_id) or answer, roots.get(trace_id))
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
