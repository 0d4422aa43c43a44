"""`trend`'s reads: the rows of the views of migration 009_one_pass_rate (`trend_by_version`,
`trend_by_hour`, `trend_by_day`), per-rung pass counts and failure classes from the same
`trend_traces` rows, with the same weights; `report/trend.py` turns them into buckets and tests.

Every read takes the same filter (a service and an environment, each optional) and the bucket
kind (`version`, `hour`, `day`), whose view, key column and order are named here once.
"""

from __future__ import annotations

from typing import Any

import duckdb

from traceladder.store.db import Store
from traceladder.store.migrations.trend import one_pass_rate_views_for_a_reader

# bucket kind → the view, its key column, the `trend_traces` column that key is, the view's order
TREND_VIEWS = {
    "version": ("trend_by_version", "service_version", "service_version", "first_seen, service_version"),
    "hour": ("trend_by_hour", "bucket", "hour_bucket", "bucket"),
    "day": ("trend_by_day", "bucket", "day_bucket", "bucket"),
}


def lay_current_views(store: Store) -> str | None:
    """Give a read-only store older than migration 009 the current trend views as temporary
    views (nothing is written); None, or why the store is too old even for them (a table or
    column they read is missing: DuckDB's first line)."""
    try:
        store.execute(one_pass_rate_views_for_a_reader())
    except duckdb.Error as exc:
        return str(exc).splitlines()[0]
    return None


def stored_traces(store: Store) -> int:
    return int(store.fetchall("SELECT count(*) FROM traces")[0][0])


def has_trace_with(store: Store, column: str, value: str) -> bool:
    """Whether a trace has `column` (`service` or `environment`) equal to `value`."""
    return bool(store.fetchall(f"SELECT 1 FROM traces WHERE {_column(column)} = ? LIMIT 1", [value]))


def known_values(store: Store, column: str) -> list[str]:
    """Every value of `column` (`service` or `environment`) the traces record."""
    column = _column(column)
    return [r[0] for r in store.fetchall(f"SELECT DISTINCT {column} FROM traces WHERE {column} IS NOT NULL")]


def _column(column: str) -> str:
    if column not in ("service", "environment"):
        raise ValueError(f"not a trend filter column: {column!r}")
    return column


def trend_filter(service: str | None, environment: str | None) -> tuple[str, list[str]]:
    """The WHERE clause over `trend_traces` (or a trend view) for a service and an environment,
    each optional, with its parameters."""
    clauses, params = ["true"], []
    for column, value in (("service", service), ("environment", environment)):
        if value is not None:
            clauses.append(f"{column} = ?")
            params.append(value)
    return " AND ".join(clauses), params


def bucket_rows(store: Store, by: str, service: str | None, environment: str | None) -> list[dict[str, Any]]:
    """The view's rows for bucket kind `by`, in series order (service, environment, then first
    seen or time)."""
    view, _, _, order = TREND_VIEWS[by]
    where, params = trend_filter(service, environment)
    order = f"service NULLS LAST, environment NULLS LAST, {order}"
    cursor = store.execute(f"SELECT * FROM {view} WHERE {where} ORDER BY {order}", params)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, r, strict=True)) for r in cursor.fetchall()]


def rung_rows(store: Store, by: str, service: str | None, environment: str | None) -> list[tuple[Any, ...]]:
    """(service, environment, key, rung, rung name, weighted passes, weighted judged) per bucket
    and rung that judged anything, by rung."""
    key = TREND_VIEWS[by][2]
    where, params = trend_filter(service, environment)
    return store.fetchall(
        f"""
        SELECT t.service, t.environment, t.{key}, r.rung, r.rung_name,
               coalesce(sum(t.weight) FILTER (WHERE r.status = 'pass'), 0.0),
               coalesce(sum(t.weight) FILTER (WHERE r.status IN ('pass', 'fail')), 0.0) AS judged
        FROM (SELECT * FROM trend_traces WHERE {where}) t JOIN rung_results r USING (trace_id)
        GROUP BY ALL HAVING judged > 0 ORDER BY r.rung, r.rung_name
        """,
        params,
    )


def class_rows(store: Store, by: str, service: str | None, environment: str | None) -> list[tuple[Any, ...]]:
    """Per bucket: each failure class's weighted judged traces, and the (rung, rung name, tool,
    param) most of its findings name (findings weighted like their trace; ties broken by name, so
    it is stable): (service, environment, key, class, traces, rung, rung name, tool, param)."""
    key = TREND_VIEWS[by][2]
    where, params = trend_filter(service, environment)
    return store.fetchall(
        f"""
        WITH t AS (SELECT * FROM trend_traces WHERE judged AND failure_class IS NOT NULL AND {where}),
        classes AS (
            SELECT service, environment, {key} AS k, failure_class, sum(weight) AS traces FROM t GROUP BY ALL
        ),
        places AS (
            SELECT t.service, t.environment, t.{key} AS k, f.code AS failure_class, f.rung, f.rung_name,
                   f.tool, f.param, sum(t.weight) AS n
            FROM t JOIN findings f ON f.trace_id = t.trace_id AND f.code = t.failure_class
            GROUP BY ALL
        ),
        top AS (
            SELECT *, row_number() OVER (PARTITION BY service, environment, k, failure_class
                                         ORDER BY n DESC, rung, rung_name, tool, param) AS place
            FROM places
        )
        SELECT c.service, c.environment, c.k, c.failure_class, c.traces, p.rung, p.rung_name, p.tool, p.param
        FROM classes c
        LEFT JOIN top p ON p.place = 1 AND p.failure_class = c.failure_class
             AND p.service IS NOT DISTINCT FROM c.service AND p.environment IS NOT DISTINCT FROM c.environment
             AND p.k IS NOT DISTINCT FROM c.k
        ORDER BY c.traces DESC, c.failure_class
        """,
        params,
    )


def sampling_rules(store: Store) -> list[tuple[str, float, bool]]:
    """Every sampling rule recorded: (stage, rate, keep errors)."""
    rows = store.fetchall("SELECT DISTINCT stage, rate, keep_errors FROM sampling ORDER BY ALL")
    return [(s, float(r), bool(k)) for s, r, k in rows]
