"""The first schema: spans, the tool calls derived from them, runs and their case runs."""

from __future__ import annotations

from traceladder.store.migrations.base import Migration

SPANS_RUNS: Migration = (
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
)

# A multi-turn case's turns (issue 33): each played turn is its own trace, with its own agent
# status. `case_runs` keeps one row per case run (what `--resume` counts as done), its trace the
# turn that ended the conversation; this table has one row per turn played.
CASE_TURNS: Migration = (
    "014_case_turns",
    """
        CREATE TABLE case_turns (
            run_id VARCHAR NOT NULL,
            case_id VARCHAR NOT NULL,
            repeat_index INTEGER NOT NULL,
            turn INTEGER NOT NULL,
            trace_id VARCHAR,
            agent_status VARCHAR NOT NULL,
            error_type VARCHAR,
            error_message VARCHAR,
            steps INTEGER,
            final_text VARCHAR,
            latency_ms DOUBLE,
            input_tokens BIGINT,
            output_tokens BIGINT,
            PRIMARY KEY (run_id, case_id, repeat_index, turn)
        );
        """,
)
