"""The stored message events of each trace that may speak before the model's first turn, for
producers that keep them off the input messages: a request attribute holding the system prompt
(`gen_ai.system_instructions`, LangGraph with OpenLLMetry), span events (Strands writes
`gen_ai.system.message` / `gen_ai.user.message` events on its chat spans) and log records
(openai-v2, Semantic Kernel). Set-based: one query per table for all the traces.

Rows only: the caller names the attribute and the events (`extract.conventions.exchanges` does), and
reads what they say; storage imports no convention.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from traceladder.instrumentation import semconv as sc
from traceladder.store.db import Store, trace_id_table
from traceladder.store.exchanges import parsed_json

# Only spans whose events name one of them: the events column is read for those alone.
_SPAN_EVENTS = """
SELECT trace_id, events FROM spans SEMI JOIN wanted_traces USING (trace_id)
WHERE events IS NOT NULL AND ({like})
ORDER BY trace_id, start_ns, span_id
"""
# A request attribute, earliest request first.
_ATTRIBUTE = """
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


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def read_message_events(
    store: Store, trace_ids: Sequence[str], *, attribute: str, names: Collection[str]
) -> dict[str, list[tuple[str, Any]]]:
    """trace → its message events named `names`, in this order: the LLM spans' `attribute` values
    (as events named `attribute`, earliest request first), the span events (name, attributes) in
    span order, then the log records (event name, parsed body) in time order. Traces with none
    are left out."""
    ordered = sorted(names)
    like = " OR ".join(f"contains(events, {_quoted(chr(34) + name + chr(34))})" for name in ordered)
    found: dict[str, list[tuple[str, Any]]] = {}
    with store.registered("wanted_traces", trace_id_table(trace_ids)) as conn:
        for trace_id, value in conn.execute(_ATTRIBUTE.format(key=attribute)).fetchall():
            found.setdefault(trace_id, []).append((attribute, value))
        if ordered:
            for trace_id, events in conn.execute(_SPAN_EVENTS.format(like=like)).fetchall():
                for event in parsed_json(events) or ():
                    if isinstance(event, dict) and event.get("name") in names:
                        found.setdefault(trace_id, []).append((event["name"], event.get("attributes")))
            records = _RECORDS.format(names=", ".join(_quoted(n) for n in ordered), event_key=sc.EVENT_NAME)
            for trace_id, name, body in conn.execute(records).fetchall():
                found.setdefault(trace_id, []).append((name, parsed_json(body)))
    return found
