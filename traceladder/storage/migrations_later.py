"""Migrations 005 onwards: traces from anywhere, live traces, scores over time.

Split from `migrations.py` only for size; the order is one list (`migrations.MIGRATIONS`). Never edit
a released migration: add a new one at the end.
"""

from __future__ import annotations

LATER: list[tuple[str, str]] = []

# Issue 11: traces from anywhere. Spans keep the rest of OTLP (links, trace state, flags); OTLP log
# records get a table (GenAI "events" are log records; some producers put tool calls only there);
# tool calls record where they were found and their place in the emitting response; each trace's
# tool definitions are kept so rung 1 can judge a trace without a domain; the receiver's segment
# files are recorded when folded in, so a crash between commit and unlink never loads one twice.
LATER.append(
    (
        "005_otlp_sources",
        """
        ALTER TABLE spans ADD COLUMN links JSON;
        ALTER TABLE spans ADD COLUMN trace_state VARCHAR;
        ALTER TABLE spans ADD COLUMN flags INTEGER;

        CREATE TABLE log_records (
            record_id VARCHAR NOT NULL,
            trace_id VARCHAR,
            span_id VARCHAR,
            time_ns BIGINT,
            observed_time_ns BIGINT,
            severity_number INTEGER,
            severity_text VARCHAR,
            event_name VARCHAR,
            body JSON,
            attributes JSON,
            resource JSON,
            scope_name VARCHAR,
            scope_version VARCHAR,
            source VARCHAR NOT NULL
        );

        ALTER TABLE tool_calls ADD COLUMN origin VARCHAR;
        ALTER TABLE tool_calls ADD COLUMN response_span_id VARCHAR;
        ALTER TABLE tool_calls ADD COLUMN record_id VARCHAR;
        ALTER TABLE tool_calls ADD COLUMN turn INTEGER;
        ALTER TABLE tool_calls ADD COLUMN call_index INTEGER;
        UPDATE tool_calls SET origin = 'tool_span';

        CREATE TABLE tool_definitions (
            trace_id VARCHAR NOT NULL,
            name VARCHAR NOT NULL,
            description VARCHAR,
            parameters VARCHAR,
            convention VARCHAR,
            span_id VARCHAR
        );

        CREATE TABLE ingested_segments (
            name VARCHAR PRIMARY KEY,
            signal VARCHAR NOT NULL,
            rows BIGINT NOT NULL,
            ingested_at TIMESTAMP DEFAULT current_timestamp
        );
        """,
    )
)

# Issue 12: live traces. `traces` indexes every trace as it arrives — when it was first and last
# seen, an arrival sequence number (bumped whenever a span or record of it is stored), its root
# span, and where it ran — so "which traces are complete and not yet judged" is one small query.
# Results record the arrival they judged (`judged_seq`: a later arrival re-opens the trace) and
# the weight sampling gave them. `sampling` records every sampling decision's rate; `watch_state`
# is the watermark of each `traceladder watch`.
LATER.append(
    (
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
)

# Issue 12 (trend): scores over time and per deploy (`traceladder trend`). Views, so `traceladder sql` and
# `trend` print the same numbers. `trend_traces` owns the two definitions the others group by: a
# trace's time (its root span's start when plausible — set, positive, and not after first_seen
# + 1 hour, the clock-skew guard — else first_seen) and "judged" (PASS, FAIL or AGENT_ERROR;
# NOT_EVALUATED and SKIP count as traces but not in the rate). Counts are weighted by what each
# result stands for under sampling; the Wilson 95% interval uses the pass rate over the weighted
# counts and the Kish effective sample size (Σw)² / Σw² — the number of judged traces when every
# weight is equal, so weighting 1/rate never makes an interval narrower than its evidence.
LATER.append(
    (
        "007_trend_views",
        """
        CREATE VIEW trend_traces AS
        SELECT trace_id, service, environment, service_version, first_seen, trace_time,
               date_trunc('hour', trace_time) AS hour_bucket, date_trunc('day', trace_time) AS day_bucket,
               verdict, failure_class, weight, judged
        FROM (
            SELECT r.trace_id, t.service, t.environment, t.service_version, t.first_seen,
                   CASE WHEN t.start_ns > 0
                             AND t.start_ns <= epoch_us(t.first_seen + INTERVAL 1 HOUR) * 1000
                        THEN make_timestamp(t.start_ns // 1000) ELSE t.first_seen END AS trace_time,
                   r.verdict, r.failure_class, coalesce(r.sample_weight, 1.0) AS weight,
                   r.verdict IN ('PASS', 'FAIL', 'AGENT_ERROR') AS judged
            FROM trace_results r
            JOIN traces t USING (trace_id)
        );

        CREATE VIEW trend_by_version AS
        SELECT service, environment, service_version, first_seen, traces, judged, passed, pass_rate,
               greatest(0.0, (pass_rate + 1.9208 / n) / (1 + 3.8416 / n)
                             - 1.96 * sqrt(pass_rate * (1 - pass_rate) / n + 0.9604 / (n * n))
                               / (1 + 3.8416 / n)) AS ci_low,
               least(1.0, (pass_rate + 1.9208 / n) / (1 + 3.8416 / n)
                          + 1.96 * sqrt(pass_rate * (1 - pass_rate) / n + 0.9604 / (n * n))
                            / (1 + 3.8416 / n)) AS ci_high,
               coalesce(n, 0.0) AS judged_effective
        FROM (
            SELECT *, passed / nullif(judged, 0) AS pass_rate FROM (
                SELECT service, environment, service_version, min(first_seen) AS first_seen,
                       sum(weight) AS traces,
                       coalesce(sum(weight) FILTER (WHERE judged), 0.0) AS judged,
                       coalesce(sum(weight) FILTER (WHERE verdict = 'PASS'), 0.0) AS passed,
                       sum(weight) FILTER (WHERE judged) ^ 2
                           / nullif(sum(weight * weight) FILTER (WHERE judged), 0) AS n
                FROM trend_traces
                GROUP BY service, environment, service_version
            )
        );

        CREATE VIEW trend_by_hour AS
        SELECT service, environment, bucket, traces, judged, passed, pass_rate,
               greatest(0.0, (pass_rate + 1.9208 / n) / (1 + 3.8416 / n)
                             - 1.96 * sqrt(pass_rate * (1 - pass_rate) / n + 0.9604 / (n * n))
                               / (1 + 3.8416 / n)) AS ci_low,
               least(1.0, (pass_rate + 1.9208 / n) / (1 + 3.8416 / n)
                          + 1.96 * sqrt(pass_rate * (1 - pass_rate) / n + 0.9604 / (n * n))
                            / (1 + 3.8416 / n)) AS ci_high,
               coalesce(n, 0.0) AS judged_effective
        FROM (
            SELECT *, passed / nullif(judged, 0) AS pass_rate FROM (
                SELECT service, environment, hour_bucket AS bucket,
                       sum(weight) AS traces,
                       coalesce(sum(weight) FILTER (WHERE judged), 0.0) AS judged,
                       coalesce(sum(weight) FILTER (WHERE verdict = 'PASS'), 0.0) AS passed,
                       sum(weight) FILTER (WHERE judged) ^ 2
                           / nullif(sum(weight * weight) FILTER (WHERE judged), 0) AS n
                FROM trend_traces
                GROUP BY service, environment, hour_bucket
            )
        );

        CREATE VIEW trend_by_day AS
        SELECT service, environment, bucket, traces, judged, passed, pass_rate,
               greatest(0.0, (pass_rate + 1.9208 / n) / (1 + 3.8416 / n)
                             - 1.96 * sqrt(pass_rate * (1 - pass_rate) / n + 0.9604 / (n * n))
                               / (1 + 3.8416 / n)) AS ci_low,
               least(1.0, (pass_rate + 1.9208 / n) / (1 + 3.8416 / n)
                          + 1.96 * sqrt(pass_rate * (1 - pass_rate) / n + 0.9604 / (n * n))
                            / (1 + 3.8416 / n)) AS ci_high,
               coalesce(n, 0.0) AS judged_effective
        FROM (
            SELECT *, passed / nullif(judged, 0) AS pass_rate FROM (
                SELECT service, environment, day_bucket AS bucket,
                       sum(weight) AS traces,
                       coalesce(sum(weight) FILTER (WHERE judged), 0.0) AS judged,
                       coalesce(sum(weight) FILTER (WHERE verdict = 'PASS'), 0.0) AS passed,
                       sum(weight) FILTER (WHERE judged) ^ 2
                           / nullif(sum(weight * weight) FILTER (WHERE judged), 0) AS n
                FROM trend_traces
                GROUP BY service, environment, day_bucket
            )
        );
        """,
    )
)

# Issue 13: rung 5. `judgments` is the judge's cache, one row per (judge model, prompt/rubric hash,
# canonical trajectory): re-evaluating asks no judge twice. `trace_judgments` says which judgment
# each judged trace got in its latest evaluation (or why it got none) and whether it was a cache
# hit — the numbers behind "judge calls made / avoided". The judge's own calls are spans
# (source 'judge') in `spans`, each in its own trace, linked to the trace it judged.
LATER.append(
    (
        "008_judge",
        """
        CREATE TABLE judgments (
            judge_model VARCHAR NOT NULL,
            prompt_hash VARCHAR NOT NULL,
            trajectory_hash VARCHAR NOT NULL,
            verdict VARCHAR NOT NULL,
            criteria JSON NOT NULL,
            rubric_version VARCHAR,
            input_tokens BIGINT,
            output_tokens BIGINT,
            cost_usd DOUBLE,
            attempts INTEGER,
            judge_trace_id VARCHAR,
            judged_trace_id VARCHAR,
            created_at TIMESTAMP NOT NULL,
            PRIMARY KEY (judge_model, prompt_hash, trajectory_hash)
        );
        CREATE TABLE trace_judgments (
            trace_id VARCHAR PRIMARY KEY,
            run_id VARCHAR,
            judge_model VARCHAR NOT NULL,
            prompt_hash VARCHAR,
            trajectory_hash VARCHAR,
            outcome VARCHAR NOT NULL,
            error VARCHAR,
            input_tokens BIGINT,
            output_tokens BIGINT,
            cost_usd DOUBLE,
            judge_trace_id VARCHAR,
            evaluated_at TIMESTAMP NOT NULL
        );
        """,
    )
)


# Issue 21: one pass rate. The reports and the gate rate PASS / (PASS + FAIL); 007's views rated
# PASS / (PASS + FAIL + AGENT_ERROR) under the same name, so one store showed two "pass rates".
# Now `pass_rate` is PASS / scored (scored = PASS or FAIL, the report's `scored_count`), its
# interval and the drop test use the scored traces' effective size (`scored_effective`, replacing
# `judged_effective`), and the rate that counts an agent error as a failure has its own name:
# `success_rate` = PASS / judged (judged = PASS, FAIL or AGENT_ERROR, as before).
def _trend_bucket_view(name: str, keys: str, grouped: str, first_seen: str) -> str:
    # Frozen with the migration that uses it: a later change is a new migration, never an edit.
    return f"""
        CREATE VIEW {name} AS
        SELECT {keys}, {first_seen}traces, judged, scored, passed, pass_rate,
               greatest(0.0, (pass_rate + 1.9208 / n) / (1 + 3.8416 / n)
                             - 1.96 * sqrt(pass_rate * (1 - pass_rate) / n + 0.9604 / (n * n))
                               / (1 + 3.8416 / n)) AS ci_low,
               least(1.0, (pass_rate + 1.9208 / n) / (1 + 3.8416 / n)
                          + 1.96 * sqrt(pass_rate * (1 - pass_rate) / n + 0.9604 / (n * n))
                            / (1 + 3.8416 / n)) AS ci_high,
               coalesce(n, 0.0) AS scored_effective,
               passed / nullif(judged, 0) AS success_rate
        FROM (
            SELECT *, passed / nullif(scored, 0) AS pass_rate FROM (
                SELECT {grouped}, {"min(first_seen) AS first_seen, " if first_seen else ""}
                       sum(weight) AS traces,
                       coalesce(sum(weight) FILTER (WHERE judged), 0.0) AS judged,
                       coalesce(sum(weight) FILTER (WHERE scored), 0.0) AS scored,
                       coalesce(sum(weight) FILTER (WHERE verdict = 'PASS'), 0.0) AS passed,
                       sum(weight) FILTER (WHERE scored) ^ 2
                           / nullif(sum(weight * weight) FILTER (WHERE scored), 0) AS n
                FROM trend_traces
                GROUP BY ALL
            )
        );
    """


LATER.append(
    (
        "009_one_pass_rate",
        """
        DROP VIEW trend_by_version;
        DROP VIEW trend_by_hour;
        DROP VIEW trend_by_day;
        DROP VIEW trend_traces;
        CREATE VIEW trend_traces AS
        SELECT trace_id, service, environment, service_version, first_seen, trace_time,
               date_trunc('hour', trace_time) AS hour_bucket, date_trunc('day', trace_time) AS day_bucket,
               verdict, failure_class, weight, judged, scored
        FROM (
            SELECT r.trace_id, t.service, t.environment, t.service_version, t.first_seen,
                   CASE WHEN t.start_ns > 0
                             AND t.start_ns <= epoch_us(t.first_seen + INTERVAL 1 HOUR) * 1000
                        THEN make_timestamp(t.start_ns // 1000) ELSE t.first_seen END AS trace_time,
                   r.verdict, r.failure_class, coalesce(r.sample_weight, 1.0) AS weight,
                   r.verdict IN ('PASS', 'FAIL', 'AGENT_ERROR') AS judged,
                   r.verdict IN ('PASS', 'FAIL') AS scored
            FROM trace_results r
            JOIN traces t USING (trace_id)
        );
        """
        + _trend_bucket_view(
            "trend_by_version",
            "service, environment, service_version",
            "service, environment, service_version",
            "first_seen, ",
        )
        + _trend_bucket_view(
            "trend_by_hour", "service, environment, bucket", "service, environment, hour_bucket AS bucket", ""
        )
        + _trend_bucket_view(
            "trend_by_day", "service, environment, bucket", "service, environment, day_bucket AS bucket", ""
        ),
    )
)

# Issue 20: a tool definition says where it was seen: in a tool list a request sent (what the model
# was offered) or only on a tool span describing itself (so only for tools that ran). NULL: derived
# before this column existed (read as offered, as it was then).
LATER.append(
    (
        "010_tool_definition_origin",
        """
        ALTER TABLE tool_definitions ADD COLUMN offered BOOLEAN;
        """,
    )
)
