"""Scores over time and per deploy (`traceladder trend`): the trend views, and their redefinition
with one pass rate (PASS / scored, as the reports and the gate rate it)."""

from __future__ import annotations

from traceladder.store.migrations.base import Migration

# Scores over time and per deploy (`traceladder trend`). Views, so `traceladder sql` and
# `trend` print the same numbers. `trend_traces` owns the two definitions the others group by: a
# trace's time (its root span's start when plausible — set, positive, and not after first_seen
# + 1 hour, the clock-skew guard — else first_seen) and "judged" (PASS, FAIL or AGENT_ERROR;
# NOT_EVALUATED and SKIP count as traces but not in the rate). Counts are weighted by what each
# result stands for under sampling; the Wilson 95% interval uses the pass rate over the weighted
# counts and the Kish effective sample size (Σw)² / Σw² — the number of judged traces when every
# weight is equal, so weighting 1/rate never makes an interval narrower than its evidence.
TREND_VIEWS: Migration = (
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


# One pass rate. The reports and the gate rate PASS / (PASS + FAIL); 007's views rated
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


ONE_PASS_RATE: Migration = (
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


def one_pass_rate_views_for_a_reader() -> str:
    """009's views as temporary views: a read-only connection to a store written before 009 reads
    the current definitions through them (they shadow the stored 007 views) without writing."""
    statements = [st.strip() for st in ONE_PASS_RATE[1].split(";") if st.strip()]
    return ";\n".join(
        st.replace("CREATE VIEW", "CREATE OR REPLACE TEMP VIEW", 1)
        for st in statements
        if not st.startswith("DROP VIEW")
    )
