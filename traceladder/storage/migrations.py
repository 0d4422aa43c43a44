"""The store's schema, as named migrations applied in order and recorded in `schema_migrations`.

Never edit a released migration: add a new one. `tests/test_store.py` pins the blank schema.
"""

from __future__ import annotations

MIGRATIONS: list[tuple[str, str]] = [
    (
        "001_spans_runs",
        """
        CREATE TABLE spans (
            trace_id VARCHAR NOT NULL,
            span_id VARCHAR NOT NULL,
            parent_span_id VARCHAR,
            name VARCHAR NOT NULL,
            kind VARCHAR,
            start_ns BIGINT,
            end_ns BIGINT,
            status_code VARCHAR,
            status_message VARCHAR,
            attributes JSON,
            events JSON,
            resource JSON,
            scope_name VARCHAR,
            scope_version VARCHAR,
            source VARCHAR NOT NULL,
            -- materialised at write time from attributes, so readers never json_extract:
            operation VARCHAR,
            tool_name VARCHAR,
            tool_call_id VARCHAR,
            tool_arguments VARCHAR,
            tool_result VARCHAR,
            error_type VARCHAR,
            convention VARCHAR
        );
        CREATE TABLE tool_calls (
            trace_id VARCHAR NOT NULL,
            span_id VARCHAR NOT NULL,
            ordinal INTEGER NOT NULL,
            tool_name VARCHAR NOT NULL,
            call_id VARCHAR,
            arguments_raw VARCHAR,
            arguments JSON,
            result VARCHAR,
            status VARCHAR NOT NULL,
            error_type VARCHAR,
            convention VARCHAR,
            start_ns BIGINT,
            end_ns BIGINT
        );
        CREATE TABLE runs (
            run_id VARCHAR PRIMARY KEY,
            suite VARCHAR,
            domain VARCHAR,
            model VARCHAR NOT NULL,
            provider VARCHAR,
            base_url_host VARCHAR,
            config JSON,
            input_hashes JSON,
            selection JSON,
            cases_total INTEGER,
            started_at TIMESTAMP,
            finished_at TIMESTAMP,
            status VARCHAR NOT NULL
        );
        CREATE TABLE case_runs (
            run_id VARCHAR NOT NULL,
            case_id VARCHAR NOT NULL,
            repeat_index INTEGER NOT NULL,
            trace_id VARCHAR,
            dimension VARCHAR,
            agent_status VARCHAR NOT NULL,
            error_type VARCHAR,
            error_message VARCHAR,
            steps INTEGER,
            final_text VARCHAR,
            latency_ms DOUBLE,
            input_tokens BIGINT,
            output_tokens BIGINT,
            expected_label JSON,
            finished_at TIMESTAMP,
            PRIMARY KEY (run_id, case_id, repeat_index)
        );
        """,
    ),
]

MIGRATIONS.append(
    (
        "002_results_findings",
        """
        CREATE TABLE results (
            run_id VARCHAR NOT NULL,
            case_id VARCHAR NOT NULL,
            repeat_index INTEGER NOT NULL,
            trace_id VARCHAR,
            dimension VARCHAR,
            verdict VARCHAR NOT NULL,
            failure_class VARCHAR,
            settled_at INTEGER,
            rung1_status VARCHAR,
            rung1_score DOUBLE,
            rung2_status VARCHAR,
            rung2_recall DOUBLE,
            rung2_precision DOUBLE,
            rung3_status VARCHAR,
            rung3_strict DOUBLE,
            rung3_unordered DOUBLE,
            rung3_subset DOUBLE,
            rung3_superset DOUBLE,
            rung4_status VARCHAR,
            rung4_positional DOUBLE,
            rung4_optimal DOUBLE,
            explanation VARCHAR,
            evidence JSON,
            evaluator_version VARCHAR NOT NULL,
            evaluated_at TIMESTAMP
        );
        CREATE TABLE findings (
            run_id VARCHAR NOT NULL,
            case_id VARCHAR NOT NULL,
            repeat_index INTEGER NOT NULL,
            trace_id VARCHAR,
            rung INTEGER NOT NULL,
            code VARCHAR NOT NULL,
            tool VARCHAR,
            param VARCHAR,
            expected VARCHAR,
            actual VARCHAR,
            message VARCHAR,
            ordinal INTEGER,
            evaluator_version VARCHAR NOT NULL
        );
        """,
    )
)

MIGRATIONS.append(
    (
        "003_query_views",
        """
        -- The documented query surface (docs/data-model.md). Views, so they always reflect the
        -- tables; stable names and columns, extended only by adding columns at the end.
        CREATE VIEW failures AS
        SELECT f.run_id, f.case_id, f.repeat_index, r.dimension, r.verdict,
               r.failure_class AS case_failure_class, f.rung, f.code, f.tool, f.param,
               f.expected, f.actual, f.message, f.ordinal, tc.arguments_raw AS arguments,
               tc.result AS tool_result, f.trace_id
        FROM findings f
        JOIN results r USING (run_id, case_id, repeat_index)
        LEFT JOIN tool_calls tc ON tc.trace_id = f.trace_id AND tc.ordinal = f.ordinal;

        CREATE VIEW case_results AS
        SELECT r.run_id, r.case_id, r.repeat_index, r.dimension, r.verdict, r.failure_class,
               r.settled_at, r.rung4_optimal AS tool_call_accuracy, r.explanation,
               cr.agent_status, cr.error_type AS agent_error, cr.steps, cr.latency_ms,
               cr.input_tokens, cr.output_tokens, ru.model, ru.started_at AS run_started_at,
               r.trace_id
        FROM results r
        LEFT JOIN case_runs cr ON cr.trace_id = r.trace_id
        LEFT JOIN runs ru ON ru.run_id = r.run_id;
        """,
    )
)
