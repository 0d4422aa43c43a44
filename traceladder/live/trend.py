"""Scores over time and per deploy, and the drop test behind `traceladder trend`.

Each bucket's counts, pass rate and Wilson interval are read from the views of migration
009_one_pass_rate (`trend_by_version`, `trend_by_hour`, `trend_by_day`; docs/data-model.md), never
computed again here. The pass rate is the reports' and the gate's: PASS / (PASS + FAIL); the
rate that counts AGENT_ERROR as a failure is `success_rate`, shown beside it, never tested.
Beside them: per-rung pass rates and the failure classes of each bucket, from the same
`trend_traces` rows with the same weights.

The drop test compares each bucket with the one before it, per service and environment: versions
in the order they were first seen (traces without a `service.version` are not a deploy and are left
out), hours or days in time order. A pair is flagged when both have at least `min_traces` scored
traces (PASS or FAIL; the views' `scored_effective`) and the one-sided pooled two-proportion
z-test of "the later rate is lower" gives p < `alpha`. A flagged pair names the failure classes
whose share of judged traces grew, each with the rung, tool and parameter most of its findings name.
Each bucket also counts the conversations of several turns that ended in it, with their pass rate
(issue 33; shown, never tested).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, get_args

from traceladder.errors import StoreError, UserError
from traceladder.live.stats import two_proportion_z
from traceladder.storage.conversation_report import conversation_buckets
from traceladder.storage.db import Store, open_store

By = Literal["version", "hour", "day"]
BY_CHOICES: tuple[str, ...] = get_args(By)
DEFAULT_ALPHA = 0.05
DEFAULT_MIN_TRACES = 30
# view, its key column, the `trend_traces` column that key is
_SOURCES = {
    "version": ("trend_by_version", "service_version", "service_version"),
    "hour": ("trend_by_hour", "bucket", "hour_bucket"),
    "day": ("trend_by_day", "bucket", "day_bucket"),
}
TREND_MIGRATION = "009_one_pass_rate"  # the views as this module reads them
_ORDER = {"version": "first_seen, service_version", "hour": "bucket", "day": "bucket"}
Key = tuple[str | None, str | None, Any]  # service, environment, version or bucket start


@dataclass(frozen=True)
class RungRate:
    """A rung's weighted passes out of its weighted pass + fail (not_evaluated/skipped left out)."""

    rung: int
    rung_name: str
    passed: float
    judged: float

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.judged if self.judged else None


@dataclass(frozen=True)
class ClassCount:
    """Judged traces (weighted) whose dominant class this is, and where most of its findings point."""

    failure_class: str
    traces: float
    share: float | None  # of the bucket's judged traces
    rung: int | None = None
    rung_name: str | None = None
    tool: str | None = None
    param: str | None = None

    def where(self) -> str:
        """`rung 1 schema, get_order.orderId`; empty when no finding of the class was recorded."""
        if self.rung is None:
            return ""
        call = ".".join(p for p in (self.tool, self.param) if p)
        return f"rung {self.rung} {self.rung_name}" + (f", {call}" if call else "")


@dataclass(frozen=True)
class ConversationCounts:
    """The conversations of several turns that ended in a bucket (their last turn's trace is in
    it), by their verdict, unweighted; the pass rate is PASS / (PASS + FAIL), as the traces'."""

    verdicts: dict[str, int]

    @property
    def conversations(self) -> int:
        return sum(self.verdicts.values())

    @property
    def scored(self) -> int:
        return self.verdicts.get("PASS", 0) + self.verdicts.get("FAIL", 0)

    @property
    def pass_rate(self) -> float | None:
        return self.verdicts.get("PASS", 0) / self.scored if self.scored else None


@dataclass(frozen=True)
class Bucket:
    row: dict[str, Any]  # the view's row, by column name
    rungs: tuple[RungRate, ...]
    classes: tuple[ClassCount, ...]  # most traces first
    conversations: ConversationCounts = ConversationCounts({})

    @property
    def key(self) -> Key:
        row = self.row
        return (row["service"], row["environment"], row.get("service_version", row.get("bucket")))


@dataclass(frozen=True)
class Growth:
    cls: ClassCount  # as in the later bucket
    before: float
    after: float

    def describe(self) -> str:
        where = self.cls.where()
        return f"{self.cls.failure_class} {self.after - self.before:+.0%}" + (f" ({where})" if where else "")


@dataclass(frozen=True)
class Comparison:
    previous: Bucket
    current: Bucket
    z: float | None  # None: not tested (too few judged traces)
    p: float | None
    flagged: bool
    grew: tuple[Growth, ...]


@dataclass(frozen=True)
class Trend:
    by: str
    alpha: float
    min_traces: int
    buckets: tuple[Bucket, ...]
    comparisons: tuple[Comparison, ...]
    sampling: tuple[tuple[str, float, bool], ...]  # (stage, rate, keep_errors), distinct
    stored_traces: int  # in `traces`, judged or not

    @property
    def drops(self) -> tuple[Comparison, ...]:
        return tuple(c for c in self.comparisons if c.flagged)

    @property
    def judged(self) -> bool:
        return any(b.row["judged"] > 0 for b in self.buckets)


def open_trend_store(path: Path) -> Store:
    """The store, read-only, with the trend views: a store last written before migration
    009_one_pass_rate is upgraded by one short write open first (readers never migrate)."""
    store = open_store(path, read_only=True)
    if TREND_MIGRATION in store.applied_migrations():
        return store
    store.close()
    if not os.access(path, os.W_OK):
        raise StoreError(
            f"{path} predates the current trend views (migration {TREND_MIGRATION}) and is not writable; "
            "open it once with a writing command (e.g. `traceladder evaluate`) to add them"
        )
    Store(path).close()
    return Store(path, read_only=True)


def trend(
    store: Store,
    *,
    by: str = "version",
    service: str | None = None,
    environment: str | None = None,
    alpha: float = DEFAULT_ALPHA,
    min_traces: int = DEFAULT_MIN_TRACES,
) -> Trend:
    """Every bucket of `by` (filtered to a service / environment) and the drop test over them."""
    if by not in _SOURCES:
        raise ValueError(f"by must be one of {', '.join(BY_CHOICES)}, not {by!r}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), not {alpha}")
    stored = store.fetchall("SELECT count(*) FROM traces")[0][0]
    if stored:
        _check_present(store, "service", service)
        _check_present(store, "environment", environment)
    where, params = _filters(service, environment)
    view, view_key, trace_key = _SOURCES[by]
    order = f"service NULLS LAST, environment NULLS LAST, {_ORDER[by]}"
    cursor = store.execute(f"SELECT * FROM {view} WHERE {where} ORDER BY {order}", params)
    names = [d[0] for d in cursor.description]
    rows = [dict(zip(names, r, strict=True)) for r in cursor.fetchall()]
    rungs = _rungs(store, trace_key, where, params)
    classes = _classes(store, trace_key, where, params)
    conversations = conversation_buckets(store, trace_key, where, params)
    buckets = []
    for row in rows:
        key = (row["service"], row["environment"], row[view_key])
        total = row["judged"]
        shared = tuple(replace(c, share=c.traces / total if total else None) for c in classes.get(key, ()))
        counted = ConversationCounts(conversations.get(key, {}))
        buckets.append(Bucket(row, tuple(rungs.get(key, ())), shared, counted))
    sampling = store.fetchall("SELECT DISTINCT stage, rate, keep_errors FROM sampling ORDER BY ALL")
    return Trend(
        by, alpha, min_traces, tuple(buckets), _compare(buckets, by, alpha, min_traces),
        tuple((s, float(r), bool(k)) for s, r, k in sampling), stored,
    )  # fmt: skip


def _check_present(store: Store, column: str, value: str | None) -> None:
    """A --service or --environment naming nothing in the store is a typo, not a quiet pass."""
    if value is None or store.fetchall(f"SELECT 1 FROM traces WHERE {column} = ? LIMIT 1", [value]):
        return
    known = [r[0] for r in store.fetchall(f"SELECT DISTINCT {column} FROM traces WHERE {column} IS NOT NULL")]
    shown = ", ".join(sorted(known)[:10]) or "none recorded"
    raise UserError(f"no trace in the store has {column} {value!r} (known: {shown})")


def _filters(service: str | None, environment: str | None) -> tuple[str, list[str]]:
    clauses, params = ["true"], []
    for column, value in (("service", service), ("environment", environment)):
        if value is not None:
            clauses.append(f"{column} = ?")
            params.append(value)
    return " AND ".join(clauses), params


def _rungs(store: Store, key: str, where: str, params: list[str]) -> dict[Key, list[RungRate]]:
    rows = store.fetchall(
        f"""
        SELECT t.service, t.environment, t.{key}, r.rung, r.rung_name,
               coalesce(sum(t.weight) FILTER (WHERE r.status = 'pass'), 0.0),
               coalesce(sum(t.weight) FILTER (WHERE r.status IN ('pass', 'fail')), 0.0) AS judged
        FROM (SELECT * FROM trend_traces WHERE {where}) t JOIN rung_results r USING (trace_id)
        GROUP BY ALL HAVING judged > 0 ORDER BY r.rung, r.rung_name
        """,
        params,
    )
    out: dict[Key, list[RungRate]] = {}
    for service, env, k, rung, name, passed, judged in rows:
        out.setdefault((service, env, k), []).append(RungRate(rung, name, passed, judged))
    return out


def _classes(store: Store, key: str, where: str, params: list[str]) -> dict[Key, list[ClassCount]]:
    """Per bucket: each failure class's weighted judged traces, and the (rung, tool, param) most of
    its findings name (findings weighted like their trace; ties broken by name, so it is stable)."""
    rows = store.fetchall(
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
    out: dict[Key, list[ClassCount]] = {}
    for service, env, k, name, traces, rung, rung_name, tool, param in rows:
        place = ClassCount(name, traces, None, rung, rung_name, tool, param)
        out.setdefault((service, env, k), []).append(place)
    return out


def _compare(buckets: list[Bucket], by: str, alpha: float, min_traces: int) -> tuple[Comparison, ...]:
    groups: dict[tuple[str | None, str | None], list[Bucket]] = {}
    for b in buckets:
        if by == "version" and b.row["service_version"] is None:
            continue
        groups.setdefault(b.key[:2], []).append(b)
    out = []
    for series in groups.values():  # already in first-seen / time order
        for before, after in zip(series, series[1:], strict=False):
            n1, n2 = before.row["scored_effective"], after.row["scored_effective"]
            if n1 < min_traces or n2 < min_traces:
                out.append(Comparison(before, after, None, None, False, ()))
                continue
            z, p = two_proportion_z(before.row["pass_rate"], n1, after.row["pass_rate"], n2)
            flagged = p < alpha
            out.append(Comparison(before, after, z, p, flagged, _growth(before, after) if flagged else ()))
    return tuple(out)


def _growth(before: Bucket, after: Bucket) -> tuple[Growth, ...]:
    earlier = {c.failure_class: c.share or 0.0 for c in before.classes}
    grown = [Growth(c, earlier.get(c.failure_class, 0.0), c.share or 0.0) for c in after.classes]
    grown = [g for g in grown if g.after > g.before]
    return tuple(sorted(grown, key=lambda g: (g.before - g.after, g.cls.failure_class)))


def label(bucket: Bucket, by: str) -> str:
    """`1.1`, `2024-05-01 10:00` or `2024-05-01`."""
    value = bucket.key[2]
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M" if by == "hour" else "%Y-%m-%d")
    return "(no version)" if value is None else str(value)
