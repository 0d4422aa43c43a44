"""The trace index: one row per trace, rewritten whenever a span or log record of it is stored.

It answers the live questions without scanning spans: when did the trace first and last arrive,
what is its arrival number (`seq`, from one sequence: a later arrival has a higher number, so a
result that judged an older `seq` is stale), does it have a root span yet, where did it run
(service, version, environment, agent) and how many model requests did it make, and which
extraction derived its rows. Runs inside the writer's transaction, on the traces registered as
`affected_traces`, with what only a convention can say (the agent's name) registered by the
extraction stage as `derived_facts`, with why its calls cannot be judged whole (`unread`); model
requests are the spans whose derived `role` is 'llm'.
"""

from __future__ import annotations

from datetime import UTC, datetime

import duckdb

from traceladder.store.derived import Stamp

# A trace's root is its span without a parent (the earliest, if a broken producer sent several).
_FACTS = """
SELECT a.trace_id,
       count(s.span_id)::INTEGER AS spans,
       coalesce(bool_or(s.parent_span_id IS NULL), false) AS has_root,
       min(s.start_ns) FILTER (WHERE s.parent_span_id IS NULL) AS start_ns,
       arg_min(s.end_ns, s.start_ns) FILTER (WHERE s.parent_span_id IS NULL) AS end_ns,
       coalesce(bool_or(s.status_code = 'ERROR'), false) AS error,
       coalesce(max(s.resource->>'$."service.name"') FILTER (WHERE s.parent_span_id IS NULL),
                max(s.resource->>'$."service.name"')) AS service,
       coalesce(max(s.resource->>'$."service.version"') FILTER (WHERE s.parent_span_id IS NULL),
                max(s.resource->>'$."service.version"')) AS service_version,
       coalesce(max(s.resource->>'$."deployment.environment.name"'),
                max(s.resource->>'$."deployment.environment"')) AS environment,
       count(*) FILTER (WHERE s.role = 'llm')::INTEGER AS model_turns
FROM affected_traces a
LEFT JOIN spans s ON s.trace_id = a.trace_id
GROUP BY a.trace_id
"""


def index_traces(
    conn: duckdb.DuckDBPyConnection, now: datetime | None = None, *, stamp: Stamp, arrived: bool = True
) -> None:
    """Rewrite the index rows of the registered `affected_traces`: facts recomputed from all their
    spans, `first_seen` kept, a new `seq`, `last_seen` now when they `arrived` (kept on a rebuild),
    and the extraction's `stamp`."""
    moment = (now or datetime.now(UTC)).replace(tzinfo=None)
    last_seen = "$now" if arrived else "coalesce(o.last_seen, $now)"
    fresh = conn.sql(
        f"""
        SELECT f.trace_id, coalesce(o.first_seen, $now) AS first_seen, {last_seen} AS last_seen,
               nextval('trace_arrival_seq') AS seq, f.spans, f.has_root, f.start_ns, f.end_ns, f.error,
               f.service, f.service_version, f.environment, d.agent_name, f.model_turns,
               $version AS extraction, $conventions AS conventions, d.unread
        FROM ({_FACTS}) f LEFT JOIN traces o USING (trace_id) LEFT JOIN derived_facts d USING (trace_id)
        ORDER BY f.trace_id
        """,
        params={"now": moment, "version": stamp.version, "conventions": stamp.conventions},
    ).to_arrow_table()
    conn.execute("DELETE FROM traces WHERE trace_id IN (SELECT trace_id FROM affected_traces)")
    conn.register("fresh_traces", fresh)
    try:
        conn.execute("INSERT INTO traces SELECT * FROM fresh_traces")
    finally:
        conn.unregister("fresh_traces")
