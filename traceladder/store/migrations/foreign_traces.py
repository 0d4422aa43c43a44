"""Traces from anywhere: the rest of OTLP on spans, log records, where each tool call was found,
each trace's tool definitions, and the receiver's folded segments."""

from __future__ import annotations

from traceladder.store.migrations.base import Migration

# Traces from anywhere. Spans keep the rest of OTLP (links, trace state, flags); OTLP log
# records get a table (GenAI "events" are log records; some producers put tool calls only there);
# tool calls record where they were found and their place in the emitting response; each trace's
# tool definitions are kept so rung 1 can judge a trace without a domain; the receiver's segment
# files are recorded when folded in, so a crash between commit and unlink never loads one twice.
OTLP_SOURCES: Migration = (
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
