"""What the HTML report shows beside a ReportV1: each trace's spans (the waterfall), its tool results,
final answer and conversation (read by `extract.conventions.exchanges` and handed in), and the
judged traces of a time window that belong to no run (the live page).

Set-based like `readers`: the traces of interest are registered once as an Arrow table and each
table is read in one query, never once per trace.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from traceladder.exchange import ExchangeDetail
from traceladder.store.db import Store, trace_id_table
from traceladder.store.readers import dict_rows

# The model a trace used, by convention: OTel GenAI request/response, OpenInference.
_MODEL = (
    "coalesce(attributes->>'$.\"gen_ai.request.model\"', attributes->>'$.\"gen_ai.response.model\"', "
    "attributes->>'$.\"llm.model_name\"')"
)


@dataclass(frozen=True)
class TraceDetail:
    """One trace's spans in start order, its tool results by call ordinal, its final answer, and
    what was said (None when the trace records nothing of it)."""

    spans: list[dict[str, Any]] = field(default_factory=list)
    results: dict[int, str | None] = field(default_factory=dict)
    final_text: str | None = None
    conversation: ExchangeDetail | None = None


@dataclass(frozen=True)
class Window:
    """The judged traces without a run whose first span arrived at or after `since` (UTC)."""

    since: datetime
    trace_ids: list[str]  # empty: no judged trace in the window
    services: list[dict[str, Any]]  # service, service_version, environment, traces, first/last seen
    models: list[str]


@contextmanager
def _traces(store: Store, trace_ids: Sequence[str]) -> Iterator[None]:
    """`wanted_traces` names these trace ids for the duration (the caller holds no lock)."""
    with store.registered("wanted_traces", trace_id_table(trace_ids)):
        yield


def trace_details(
    store: Store,
    trace_ids: Sequence[str],
    *,
    max_spans: int = 200,
    said: Mapping[str, ExchangeDetail] | None = None,
) -> dict[str, TraceDetail]:
    """Spans (at most `max_spans` per trace, earliest first), tool results, final answers, and the
    conversations the caller read (`said`, by convention: storage reads none)."""
    with _traces(store, trace_ids):
        spans = dict_rows(
            store,
            "SELECT trace_id, span_id, parent_span_id, name, kind, operation, start_ns, end_ns, status_code, "
            "error_type, tool_name FROM (SELECT *, row_number() OVER (PARTITION BY trace_id "
            "ORDER BY start_ns, span_id) AS n FROM spans SEMI JOIN wanted_traces USING (trace_id)) "
            "WHERE n <= ? ORDER BY trace_id, start_ns, span_id",
            [max_spans],
        )
        results = store.fetchall(
            "SELECT trace_id, ordinal, result FROM tool_calls SEMI JOIN wanted_traces USING (trace_id)"
        )
        answers = store.fetchall(
            "SELECT trace_id, max(final_text) FROM case_runs SEMI JOIN wanted_traces USING (trace_id) "
            "GROUP BY trace_id"
        )
    span_lists: dict[str, list[dict[str, Any]]] = {}
    for s in spans:
        span_lists.setdefault(s.pop("trace_id"), []).append(s)
    result_maps: dict[str, dict[int, str | None]] = {}
    for trace_id, ordinal, result in results:
        result_maps.setdefault(trace_id, {})[ordinal] = result
    final = dict(answers)
    said = said or {}
    return {
        t: TraceDetail(span_lists.get(t, []), result_maps.get(t, {}), final.get(t), said.get(t))
        for t in trace_ids
        if t in span_lists or t in result_maps or t in final or t in said
    }


def live_window(store: Store, since: datetime) -> Window:
    """Every judged trace with no run first seen at or after `since`: their ids (the report's scope,
    `store.run_report.scope_of_traces`), the services and models they came from."""
    ids = [
        r[0]
        for r in store.fetchall(
            "SELECT r.trace_id FROM trace_results r JOIN traces t USING (trace_id) "
            "WHERE r.run_id IS NULL AND t.first_seen >= ? ORDER BY t.first_seen, r.trace_id",
            [since],
        )
    ]
    if not ids:
        return Window(since, [], [], [])
    with _traces(store, ids):
        services = dict_rows(
            store,
            "SELECT service, service_version, environment, count(*) AS traces, "
            "min(first_seen) AS first_seen, max(last_seen) AS last_seen "
            "FROM traces SEMI JOIN wanted_traces USING (trace_id) GROUP BY ALL "
            "ORDER BY first_seen, service NULLS LAST, service_version NULLS LAST",
        )
        models = store.fetchall(
            f"SELECT DISTINCT {_MODEL} AS m FROM spans SEMI JOIN wanted_traces USING (trace_id) "
            "WHERE m IS NOT NULL ORDER BY m LIMIT 20"
        )
    return Window(since, ids, services, [m for (m,) in models])
