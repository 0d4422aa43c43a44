"""Rung 5's tables: the judge's cache of judgments and which judgment each judged trace got."""

from __future__ import annotations

from traceladder.store.migrations.base import Migration

# Rung 5. `judgments` is the judge's cache, one row per (judge model, prompt/rubric hash,
# canonical trajectory): re-evaluating asks no judge twice. `trace_judgments` says which judgment
# each judged trace got in its latest evaluation (or why it got none) and whether it was a cache
# hit — the numbers behind "judge calls made / avoided". The judge's own calls are spans
# (source 'judge') in `spans`, each in its own trace, linked to the trace it judged.
JUDGE: Migration = (
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
