"""The stored rows that say what was said in each trace besides its calls: a suite run's recorded
answer, the LLM spans' attributes, the OTel GenAI message log records, the root span and the
calls with their results. Set-based: one query per table for all the traces.

Rows only, nothing read by convention: `extract.conventions.exchanges` reads them (storage imports no
convention). Calls and their results are the `tool_calls` read model's, never read again from
spans.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from traceladder.exchange import ExchangeCall, ExchangeRows
from traceladder.instrumentation import semconv as sc
from traceladder.store.db import Store, trace_id_table

# LLM spans: the role the extraction stage derived (the trace index counts the same spans as model
# turns).
_LLM_SPANS = """
SELECT trace_id, span_id, attributes FROM spans SEMI JOIN wanted_traces USING (trace_id)
WHERE role = 'llm'
ORDER BY trace_id, start_ns, span_id
"""

# The OTel GenAI events (log records) of producers that keep message content off the spans.
_EVENTS = f"""
SELECT trace_id, event_name, body FROM log_records SEMI JOIN wanted_traces USING (trace_id)
WHERE event_name IN ('{sc.EVENT_USER_MESSAGE}', '{sc.EVENT_CHOICE}')
ORDER BY trace_id, time_ns, record_id
"""

_RECORDED = """
SELECT trace_id, max(final_text) FROM case_runs SEMI JOIN wanted_traces USING (trace_id)
GROUP BY trace_id
"""

_ROOTS = """
SELECT trace_id, arg_min(span_id, start_ns) FROM spans SEMI JOIN wanted_traces USING (trace_id)
WHERE parent_span_id IS NULL GROUP BY trace_id
"""

_CALLS = """
SELECT trace_id, ordinal, tool_name, arguments_raw, result, status, error_type, response_span_id
FROM tool_calls SEMI JOIN wanted_traces USING (trace_id)
ORDER BY trace_id, ordinal
"""


def parsed_json(text: str | None) -> Any:
    """A stored JSON column's value, None where it is empty or not JSON (a producer's garbage)."""
    try:
        return json.loads(text) if text else None
    except ValueError:
        return None


def read_exchange_rows(
    store: Store, trace_ids: Sequence[str], *, roots: bool = False, calls: bool = False
) -> ExchangeRows:
    """The rows of `trace_ids` that say what was said (`ExchangeRows`); the root spans and the
    calls are read only when asked for."""
    out = ExchangeRows(list(trace_ids))
    with store.registered("wanted_traces", trace_id_table(trace_ids)) as conn:
        out.recorded.update(conn.execute(_RECORDED).fetchall())
        for trace_id, span_id, attributes in conn.execute(_LLM_SPANS).fetchall():
            parsed = parsed_json(attributes)
            out.llm.setdefault(trace_id, []).append((span_id, parsed if isinstance(parsed, dict) else {}))
        for trace_id, name, body in conn.execute(_EVENTS).fetchall():
            out.events.setdefault(trace_id, []).append((name, parsed_json(body)))
        if roots:
            out.roots.update(conn.execute(_ROOTS).fetchall())
        if calls:
            for trace_id, ordinal, tool, raw, result, status, error_type, response in conn.execute(
                _CALLS
            ).fetchall():
                call = ExchangeCall(ordinal, tool, raw, result, status, error_type)
                out.calls.setdefault(trace_id, []).append((response, call))
    return out
