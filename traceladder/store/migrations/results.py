"""Results: the verdict and findings tables, the documented query views over them, and the
long-form results (one row per trace, one per trace and rung) that replaced the wide table."""

from __future__ import annotations

from traceladder.store.migrations.base import Migration

RESULTS_FINDINGS: Migration = (
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

QUERY_VIEWS: Migration = (
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

# The trace is the unit, and results are long-form — one row per judged trace
# (`trace_results`) and one per (trace, rung) with named scores (`rung_results`), so a new rung
# needs no migration. The documented query surface stays: `results` is now a view with the same
# columns (plus `settled_by` and `domain` at the end), and `failures` / `case_results` read it.
# Results written by earlier versions are carried over.
LONG_FORM_RESULTS: Migration = (
    "004_long_form_results",
    """
        CREATE TABLE trace_results (
            trace_id VARCHAR NOT NULL,
            run_id VARCHAR,
            case_id VARCHAR,
            repeat_index INTEGER,
            dimension VARCHAR,
            domain VARCHAR,
            verdict VARCHAR NOT NULL,
            failure_class VARCHAR,
            settled_at INTEGER,
            settled_by VARCHAR,
            explanation VARCHAR,
            evidence JSON,
            evaluator_version VARCHAR NOT NULL,
            evaluated_at TIMESTAMP
        );
        CREATE TABLE rung_results (
            trace_id VARCHAR NOT NULL,
            rung INTEGER NOT NULL,
            rung_name VARCHAR NOT NULL,
            status VARCHAR NOT NULL,
            scores MAP(VARCHAR, DOUBLE),
            explanation VARCHAR,
            evaluator_version VARCHAR NOT NULL
        );

        INSERT INTO trace_results
        SELECT trace_id, run_id, case_id, repeat_index, dimension, NULL, verdict, failure_class, settled_at,
               CASE settled_at WHEN 1 THEN 'schema' WHEN 2 THEN 'call_match' WHEN 3 THEN 'trajectory'
                               WHEN 4 THEN 'partial_credit' END,
               explanation, evidence, evaluator_version, evaluated_at
        FROM results WHERE trace_id IS NOT NULL;
        INSERT INTO rung_results
        SELECT trace_id, rung, rung_name, status,
               map_from_entries(list_filter(entries, lambda e: e.v IS NOT NULL)), NULL, evaluator_version
        FROM (
            SELECT trace_id, evaluator_version, 1 AS rung, 'schema' AS rung_name, rung1_status AS status,
                   [struct_pack(k := 'valid_fraction', v := rung1_score)] AS entries FROM results
            UNION ALL
            SELECT trace_id, evaluator_version, 2, 'call_match', rung2_status,
                   [struct_pack(k := 'recall', v := rung2_recall),
                    struct_pack(k := 'precision', v := rung2_precision)]
            FROM results
            UNION ALL
            SELECT trace_id, evaluator_version, 3, 'trajectory', rung3_status,
                   [struct_pack(k := 'strict', v := rung3_strict),
                    struct_pack(k := 'unordered', v := rung3_unordered),
                    struct_pack(k := 'subset', v := rung3_subset),
                    struct_pack(k := 'superset', v := rung3_superset)]
            FROM results
            UNION ALL
            SELECT trace_id, evaluator_version, 4, 'partial_credit', rung4_status,
                   [struct_pack(k := 'positional', v := rung4_positional),
                    struct_pack(k := 'optimal', v := rung4_optimal)]
            FROM results
        ) WHERE status IS NOT NULL AND trace_id IS NOT NULL;

        DROP VIEW failures;
        DROP VIEW case_results;
        DROP TABLE results;
        ALTER TABLE findings ALTER COLUMN run_id DROP NOT NULL;
        ALTER TABLE findings ALTER COLUMN case_id DROP NOT NULL;
        ALTER TABLE findings ALTER COLUMN repeat_index DROP NOT NULL;
        ALTER TABLE findings ADD COLUMN rung_name VARCHAR;
        UPDATE findings SET rung_name = CASE rung WHEN 1 THEN 'schema' WHEN 2 THEN 'call_match'
                                                  WHEN 3 THEN 'trajectory' WHEN 4 THEN 'partial_credit' END;

        CREATE VIEW results AS
        SELECT t.run_id, t.case_id, t.repeat_index, t.trace_id, t.dimension, t.verdict, t.failure_class,
               t.settled_at, s.rung1_status, s.rung1_score, s.rung2_status, s.rung2_recall, s.rung2_precision,
               s.rung3_status, s.rung3_strict, s.rung3_unordered, s.rung3_subset, s.rung3_superset,
               s.rung4_status, s.rung4_positional, s.rung4_optimal, t.explanation, t.evidence,
               t.evaluator_version, t.evaluated_at, t.settled_by, t.domain
        FROM trace_results t
        LEFT JOIN (
            SELECT trace_id,
                   max(status) FILTER (WHERE rung_name = 'schema') AS rung1_status,
                   max(scores['valid_fraction']) FILTER (WHERE rung_name = 'schema') AS rung1_score,
                   max(status) FILTER (WHERE rung_name = 'call_match') AS rung2_status,
                   max(scores['recall']) FILTER (WHERE rung_name = 'call_match') AS rung2_recall,
                   max(scores['precision']) FILTER (WHERE rung_name = 'call_match') AS rung2_precision,
                   max(status) FILTER (WHERE rung_name = 'trajectory') AS rung3_status,
                   max(scores['strict']) FILTER (WHERE rung_name = 'trajectory') AS rung3_strict,
                   max(scores['unordered']) FILTER (WHERE rung_name = 'trajectory') AS rung3_unordered,
                   max(scores['subset']) FILTER (WHERE rung_name = 'trajectory') AS rung3_subset,
                   max(scores['superset']) FILTER (WHERE rung_name = 'trajectory') AS rung3_superset,
                   max(status) FILTER (WHERE rung_name = 'partial_credit') AS rung4_status,
                   max(scores['positional']) FILTER (WHERE rung_name = 'partial_credit') AS rung4_positional,
                   max(scores['optimal']) FILTER (WHERE rung_name = 'partial_credit') AS rung4_optimal
            FROM rung_results GROUP BY trace_id
        ) s USING (trace_id);

        CREATE VIEW failures AS
        SELECT f.run_id, f.case_id, f.repeat_index, r.dimension, r.verdict,
               r.failure_class AS case_failure_class, f.rung, f.code, f.tool, f.param,
               f.expected, f.actual, f.message, f.ordinal, tc.arguments_raw AS arguments,
               tc.result AS tool_result, f.trace_id, f.rung_name
        FROM findings f
        JOIN trace_results r USING (trace_id)
        LEFT JOIN tool_calls tc ON tc.trace_id = f.trace_id AND tc.ordinal = f.ordinal;

        CREATE VIEW case_results AS
        SELECT r.run_id, r.case_id, r.repeat_index, r.dimension, r.verdict, r.failure_class,
               r.settled_at, r.rung4_optimal AS tool_call_accuracy, r.explanation,
               cr.agent_status, cr.error_type AS agent_error, cr.steps, cr.latency_ms,
               cr.input_tokens, cr.output_tokens, ru.model, ru.started_at AS run_started_at,
               r.trace_id, r.settled_by, r.domain
        FROM results r
        LEFT JOIN case_runs cr ON cr.trace_id = r.trace_id
        LEFT JOIN runs ru ON ru.run_id = r.run_id;
        """,
)
