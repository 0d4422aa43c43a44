"""Which conversation a trace says it belongs to: the producer's own attribute. Pure.

Read from span attributes, then resource attributes (an agent started with
`OTEL_RESOURCE_ATTRIBUTES=gen_ai.conversation.id=…` puts it on the resource), in this order — the
first attribute any span carries decides; among spans that disagree, the smallest value, so the
answer never depends on span order:

* `gen_ai.conversation.id` (OTel GenAI conventions, traceladder's own loop) → `gen_ai.conversation.id`
* `session.id` (OpenInference `using_session`, Logfire) → `session.id`
* `langfuse.session.id` (Langfuse) → `session.id`
* `traceloop.association.properties.thread_id` (OpenLLMetry: LangGraph's thread) → `thread_id`
* `traceloop.association.properties.session_id` (OpenLLMetry association properties) → `session.id`
* `metadata` JSON's `thread_id` (OpenInference's LangChain instrumentor: LangGraph) → `thread_id`
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from traceladder.instrumentation import semconv as sc

# (attribute, how the link is named), in precedence order.
KEYS: tuple[tuple[str, str], ...] = (
    (sc.CONVERSATION_ID, sc.CONVERSATION_ID),
    ("session.id", "session.id"),
    ("langfuse.session.id", "session.id"),
    ("traceloop.association.properties.thread_id", "thread_id"),
    ("traceloop.association.properties.session_id", "session.id"),
)
_MAX_KEY = 512  # a longer "id" is not an id a producer chose; never group on it


def _value(raw: Any) -> str | None:
    if isinstance(raw, bool) or not isinstance(raw, str | int):
        return None
    text = str(raw).strip()
    return text if 0 < len(text) <= _MAX_KEY else None


def _metadata_thread(raw: Any) -> str | None:
    if not isinstance(raw, str) or '"thread_id"' not in raw:
        return None  # parse only what can hold one
    try:
        parsed = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return _value(parsed.get("thread_id")) if isinstance(parsed, dict) else None


def conversation_key(
    span_attributes: Iterable[Mapping[str, Any]], resources: Iterable[Mapping[str, Any]] = ()
) -> tuple[str, str] | None:
    """`(linked_by, key)` of the first attribute (module table) any span or resource carries, or
    None when the trace names no conversation."""
    spans, resources = list(span_attributes), list(resources)
    for attrs in (spans, resources):
        for name, linked_by in KEYS:
            values = {v for a in attrs if (v := _value(a.get(name))) is not None}
            if values:
                return linked_by, min(values)
    threads = {v for a in spans if (v := _metadata_thread(a.get("metadata"))) is not None}
    return ("thread_id", min(threads)) if threads else None
