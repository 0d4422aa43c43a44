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

from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, get_args

from traceladder.errors import StoreError, UserError
from traceladder.evaluate.rungs.types import VerdictValue
from traceladder.report.stats import two_proportion_z
from traceladder.store.conversation_report import conversation_buckets
from traceladder.store.db import Store, open_store
from traceladder.store.trend_reads import (
    TREND_VIEWS,
    bucket_rows,
    class_rows,
    has_trace_with,
    known_values,
    lay_current_views,
    rung_rows,
    sampling_rules,
    stored_traces,
)

By = Literal["version", "hour", "day"]
BY_CHOICES: tuple[str, ...] = get_args(By)
DEFAULT_ALPHA = 0.05
DEFAULT_MIN_TRACES = 30
TREND_MIGRATION = "009_one_pass_rate"  # the views as this module reads them
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
        return self.verdicts.get(VerdictValue.PASS, 0) + self.verdicts.get(VerdictValue.FAIL, 0)

    @property
    def pass_rate(self) -> float | None:
        return self.verdicts.get(VerdictValue.PASS, 0) / self.scored if self.scored else None


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
    """The store, read-only, with the trend views. A store last written before migration
    009_one_pass_rate reads the current views laid over it as temporary views: `trend` is a reader
    and never writes (issue 30: read-only commands never write). A store too old even for that is
    a one-line error saying how to upgrade it."""
    store = open_store(path, read_only=True)
    if TREND_MIGRATION in store.applied_migrations():
        return store
    try:
        too_old = lay_current_views(store)
    except BaseException:
        store.close()
        raise
    if too_old:
        store.close()
        raise StoreError(
            f"{path} predates the current trend views (migration {TREND_MIGRATION}) and cannot show "
            f"them ({too_old}); open it once with a writing command (e.g. `traceladder evaluate`) "
            "to upgrade it"
        )
    return store


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
    if by not in TREND_VIEWS:
        raise ValueError(f"by must be one of {', '.join(BY_CHOICES)}, not {by!r}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), not {alpha}")
    stored = stored_traces(store)
    if stored:
        _check_present(store, "service", service)
        _check_present(store, "environment", environment)
    view_key = TREND_VIEWS[by][1]
    rows = bucket_rows(store, by, service, environment)
    rungs = _rungs(store, by, service, environment)
    classes = _classes(store, by, service, environment)
    conversations = conversation_buckets(store, by, service, environment)
    buckets = []
    for row in rows:
        key = (row["service"], row["environment"], row[view_key])
        total = row["judged"]
        shared = tuple(replace(c, share=c.traces / total if total else None) for c in classes.get(key, ()))
        counted = ConversationCounts(conversations.get(key, {}))
        buckets.append(Bucket(row, tuple(rungs.get(key, ())), shared, counted))
    sampling = sampling_rules(store)
    return Trend(
        by, alpha, min_traces, tuple(buckets), _compare(buckets, by, alpha, min_traces),
        tuple(sampling), stored,
    )  # fmt: skip


def _check_present(store: Store, column: str, value: str | None) -> None:
    """A --service or --environment naming nothing in the store is a typo, not a quiet pass."""
    if value is None or has_trace_with(store, column, value):
        return
    known = known_values(store, column)
    shown = ", ".join(sorted(known)[:10]) or "none recorded"
    raise UserError(f"no trace in the store has {column} {value!r} (known: {shown})")


def _rungs(store: Store, by: str, service: str | None, environment: str | None) -> dict[Key, list[RungRate]]:
    out: dict[Key, list[RungRate]] = {}
    for svc, env, k, rung, name, passed, judged in rung_rows(store, by, service, environment):
        out.setdefault((svc, env, k), []).append(RungRate(rung, name, passed, judged))
    return out


def _classes(
    store: Store, by: str, service: str | None, environment: str | None
) -> dict[Key, list[ClassCount]]:
    """Per bucket: each failure class and where most of its findings point (`store.trend_reads`)."""
    out: dict[Key, list[ClassCount]] = {}
    for svc, env, k, name, traces, rung, rung_name, tool, param in class_rows(
        store, by, service, environment
    ):
        place = ClassCount(name, traces, None, rung, rung_name, tool, param)
        out.setdefault((svc, env, k), []).append(place)
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
