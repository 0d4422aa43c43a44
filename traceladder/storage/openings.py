"""The message events of each trace that speak before the model's first turn — system prompt
and user's request — where producers keep them off the input messages: the request attribute
`gen_ai.system_instructions` (LangGraph with OpenLLMetry), span events (Strands writes
`gen_ai.system.message` / `gen_ai.user.message` events on its chat spans) and OTel GenAI log
records (openai-v2, Semantic Kernel). Set-based: one query per table for all the traces.
What the events say is read by `conventions.answers.event_opening`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from traceladder.conventions.answers import SYSTEM_EVENTS, SYSTEM_INSTRUCTIONS, USER_EVENTS, event_opening
from traceladder.instrumentation import semconv as sc
from traceladder.storage.db import Store, trace_id_table

_NAMES = sorted(SYSTEM_EVENTS | USER_EVENTS)
# Only spans whose events name one of them: the events column is read for those alone.
_SPAN_EVENTS = """
SELECT trace_id, events FROM spans SEMI JOIN wanted_traces USING (trace_id)
WHERE events IS NOT NULL AND ({like})
ORDER BY trace_id, start_ns, span_id
"""
# The system prompt as a request attribute (`gen_ai.system_instructions`), earliest request first.
_INSTRUCTIONS = """
SELECT trace_id, attributes->>'$."{key}"' FROM spans SEMI JOIN wanted_traces USING (trace_id)
WHERE role = 'llm' AND attributes->>'$."{key}"' IS NOT NULL
ORDER BY trace_id, start_ns, span_id
"""
_RECORDS = """
SELECT trace_id, coalesce(event_name, attributes->>'$."{event_key}"') AS name, body
FROM log_records SEMI JOIN wanted_traces USING (trace_id)
WHERE coalesce(event_name, attributes->>'$."{event_key}"') IN ({names})
ORDER BY trace_id, time_ns, record_id
"""


def _json(text: str | None) -> Any:
    try:
        return json.loads(text) if text else None
    except ValueError:
        return None


def read_event_openings(store: Store, trace_ids: Sequence[str]) -> dict[str, tuple[str | None, str | None]]:
    """trace → (system prompt, user's request) its message events record (span events first,
    then log records); traces whose events record neither are left out."""
    like = " OR ".join(f"contains(events, '\"{name}\"')" for name in _NAMES)
    names = ", ".join(f"'{name}'" for name in _NAMES)
    found: dict[str, list[tuple[str, Any]]] = {}
    with store.registered("wanted_traces", trace_id_table(trace_ids)) as conn:
        for trace_id, instructions in conn.execute(_INSTRUCTIONS.format(key=SYSTEM_INSTRUCTIONS)).fetchall():
            # read as a system message event would be: the first one found wins
            found.setdefault(trace_id, []).append((min(SYSTEM_EVENTS), instructions))
        for trace_id, events in conn.execute(_SPAN_EVENTS.format(like=like)).fetchall():
            for event in _json(events) or ():
                if isinstance(event, dict) and event.get("name") in SYSTEM_EVENTS | USER_EVENTS:
                    found.setdefault(trace_id, []).append((event["name"], event.get("attributes")))
        for trace_id, name, body in conn.execute(
            _RECORDS.format(names=names, event_key=sc.EVENT_NAME)
        ).fetchall():
            found.setdefault(trace_id, []).append((name, _json(body)))
    out = {}
    for trace_id, events in found.items():
        system, user = event_opening(events)
        if system is not None or user is not None:
            out[trace_id] = (system, user)
    return out
