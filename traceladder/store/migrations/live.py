"""Live traces: the trace index, arrival sequence, sampling and the watermark of `watch`."""

from __future__ import annotations

from traceladder.store.migrations.base import Migration

# Live traces. `traces` indexes every trace as it arrives — when it was first and last
# seen, an arrival sequence number (bumped whenever a span or record of it is stored), its root
# span, and where it ran — so "which traces are complete and not yet judged" is one small query.
# Results record the arrival they judged (`judged_seq`: a later arrival re-opens the trace) and
# the weight sampling gave them. `sampling` records every sampling decision's rate; `watch_state`
# is the watermark of each `traceladder watch`.
LIVE_TRACES: Migration = (
    "006_live_traces",
    """
        CREATE SEQUENCE trace_arrival_seq;
        CREATE TABLE traces (
            trace_id VARCHAR NOT NULL,
            first_seen TIMESTAMP NOT NULL,
            last_seen TIMESTAMP NOT NULL,
            seq BIGINT NOT NULL,
            spans INTEGER NOT NULL,
            has_root BOOLEAN NOT NULL,
            start_ns BIGINT,
            end_ns BIGINT,
            error BOOLEAN NOT NULL,
            service VARCHAR,
            service_version VARCHAR,
            environment VARCHAR,
            agent_name VARCHAR,
            model_turns INTEGER NOT NULL
        );
        ALTER TABLE trace_results ADD COLUMN judged_seq BIGINT;
        ALTER TABLE trace_results ADD COLUMN sample_weight DOUBLE DEFAULT 1.0;
        CREATE TABLE sampling (
            stage VARCHAR NOT NULL,
            rate DOUBLE NOT NULL,
            keep_errors BOOLEAN NOT NULL,
            recorded_at TIMESTAMP DEFAULT current_timestamp
        );
        CREATE TABLE watch_state (
            name VARCHAR NOT NULL,
            seq BIGINT NOT NULL,
            judged BIGINT NOT NULL,
            updated_at TIMESTAMP NOT NULL
        );
        -- every trace already stored, indexed as if it arrived now, in id order
        INSERT INTO traces
        SELECT f.trace_id, make_timestamp(epoch_us(now())), make_timestamp(epoch_us(now())),
               nextval('trace_arrival_seq'), f.spans, f.has_root, f.start_ns, f.end_ns, f.error,
               f.service, f.service_version, f.environment, f.agent_name, f.model_turns
        FROM (
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
               coalesce(max(s.attributes->>'$."gen_ai.agent.name"'),
                        max(s.attributes->>'$."agent.name"'),
                        max(s.name) FILTER (WHERE s.attributes->>'$."openinference.span.kind"' = 'AGENT'))
                   AS agent_name,
               count(*) FILTER (WHERE s.operation IN ('chat', 'text_completion', 'generate_content')
                                   OR s.attributes->>'$."openinference.span.kind"' = 'LLM'
                                   OR s.attributes->>'$."llm.request.type"' IN ('chat', 'completion')
                   )::INTEGER
                   AS model_turns
        FROM (SELECT DISTINCT trace_id FROM spans
              UNION SELECT DISTINCT trace_id FROM log_records WHERE trace_id IS NOT NULL) a
        LEFT JOIN spans s ON s.trace_id = a.trace_id
        GROUP BY a.trace_id
        ) f
        ORDER BY f.trace_id;
        """,
)
