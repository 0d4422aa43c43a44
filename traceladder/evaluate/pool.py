"""Judging batches of traces, in this process or in worker processes.

The ladder is pure Python and CPU-bound. Measured: a pool of 2 workers beats one process on a quiet
2-core machine and loses on a loaded one, so the pool is sized from the cores that are *free*
(affinity minus load average) and used only for evaluations of many traces (`POOL_MIN_TRACES`)
and big batches; one process is the fast path.
"""

from __future__ import annotations

import gc
import os
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import replace
from multiprocessing import get_context
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from traceladder.evaluate.assemble import (
    CallParser,
    Context,
    dedupe_key,
    dedupe_parts,
    inputs_for,
    raw_calls_by_trace,
)
from traceladder.evaluate.rows import RowBuilder
from traceladder.store.readers import Definitions, UnitRow
from traceladder.store.results import ResultTables

PARALLEL_MIN_TRACES = 10_000  # per batch; below this, starting workers costs more than it saves
# Per evaluation: below this many traces the default is one process (decision 712). A spawned
# worker costs ~0.5 CPU-s to start (imports, the context unpickled, schemas compiled), about what
# settling 15,000 traces on a second core saves; and an evaluation of one batch cannot overlap the
# workers' settle with the writer's read and write (measured: 7,793 vs 9,670 traces/s at 20,000).
POOL_MIN_TRACES = 40_000


def free_cores() -> int:
    """Cores this process may use that other programs are not already using (at least 1). The
    load average counts this process too (about one runnable task), so only the load beyond it
    means another program is busy."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    try:
        busy_elsewhere = max(0.0, os.getloadavg()[0] - 1.0)
    except OSError:
        busy_elsewhere = 0.0
    return max(1, min(cores, int(cores - busy_elsewhere + 0.5)))


def pool_size(free: int, traces: int | None) -> int:
    """The default number of worker processes: one process (1) for an evaluation of fewer than
    `POOL_MIN_TRACES` traces (`traces`; None: not known), else the free cores, at most 4."""
    if traces is not None and traces < POOL_MIN_TRACES:
        return 1
    return max(1, min(free, 4))


class SettleMemo:
    """The verdicts of the last two batches an evaluation settled, by dedupe key: a trace whose
    inputs equal one judged in this batch or the one before is not judged again. Two batches, not
    the whole store: memory stays bounded by the batch size (decision 100), and most repeats of a
    store's common outcomes fall within it (decision 551). One memo serves one evaluation's
    context: its keys say nothing of the ladder or the options."""

    def __init__(self) -> None:
        self.current: dict[tuple[Any, ...], tuple[Any, Any]] = {}
        self.previous: dict[tuple[Any, ...], tuple[Any, Any]] = {}

    def next_batch(self) -> None:
        self.previous, self.current = self.current, {}


def settle_batch(
    units: Sequence[UnitRow], call_table: pa.Table, ctx: Context, memo: SettleMemo | None = None
) -> ResultTables:
    """Settle these traces (their calls are in `call_table`) into result tables.

    The ladder is a pure function of a trace's inputs, so traces with identical inputs — the same
    domain, case and agent outcome, and the same calls with the same arguments, statuses and
    results, in the same order — are judged once per batch, and once per two batches with the
    evaluation's `memo` (a re-run suite is mostly such traces). The key is derived from what the
    ladder's rungs read (`assemble.dedupe_parts`).
    """
    requests = frozenset().union(*(d.rules.requests for d in ctx.domains.values()))
    raw_calls = raw_calls_by_trace(call_table)
    parser = CallParser(requests)
    builder = RowBuilder(ctx.ladder.version + ctx.judge_tag)
    settle = ctx.ladder.settle
    memo = memo if memo is not None else SettleMemo()
    seen, before = memo.current, memo.previous
    parts = dedupe_parts(ctx.ladder)
    weigh = ctx.sampling.weight
    for unit in units:
        recorded = raw_calls.get(unit.trace_id, ())
        key = dedupe_key(unit, recorded, ctx, parts)
        hit = seen.get(key)
        if hit is None:
            hit = before.get(key)
            if hit is None:
                inputs = inputs_for(unit, parser.calls(recorded), ctx)
                hit = (inputs.case, settle(inputs))
            seen[key] = hit  # judged, or used again: kept for the next batch too
        builder.add(unit, hit[0], hit[1], weigh(unit.error))
    memo.next_batch()
    return builder.tables()


# A batch's captured tool-definition sets (digest → definitions), sent with the batch, or None to
# use the context's own: an evaluation reads them a batch at a time, never the whole store's.
DefinitionSets = Mapping[str, Definitions] | None
Batch = tuple[list[UnitRow], pa.Table, DefinitionSets]  # units, their calls, their definition sets


_worker_context: dict[str, Any] = {}


def _init_worker(ctx: Context) -> None:
    gc.disable()
    _worker_context["ctx"] = ctx
    _worker_context["memo"] = SettleMemo()


def _work(units: Sequence[UnitRow], call_table: pa.Table, definition_sets: DefinitionSets) -> ResultTables:
    ctx = _with_definitions(_worker_context["ctx"], definition_sets)
    return settle_batch(units, call_table, ctx, _worker_context["memo"])


def _with_definitions(ctx: Context, definition_sets: DefinitionSets) -> Context:
    return ctx if definition_sets is None else replace(ctx, definition_sets=definition_sets)


class SettlePool:
    """Settle batches serially, or over worker processes when there is enough work and free cores.
    `workers`: as many worker processes (1: this process); None chooses by `pool_size` from the
    free cores and `traces`, the number of traces the evaluation will settle (None: unknown)."""

    def __init__(
        self, ctx: Context, *, workers: int | None = None, min_parallel: int = PARALLEL_MIN_TRACES,
        traces: int | None = None,
    ) -> None:  # fmt: skip
        self.ctx, self.min_parallel = ctx, min_parallel
        self.workers = workers if workers is not None else pool_size(free_cores(), traces)
        self._pool: ProcessPoolExecutor | None = None
        # Per pending part: the batch it belongs to, and the future of its worker task or the
        # arguments of an in-process batch, judged when its result is asked for (so in-process
        # results stream too, one batch in memory at a time).
        self._pending: deque[tuple[int, Future[ResultTables] | Batch]] = deque()
        self._submitted = 0
        self._memo = SettleMemo()  # this process's, for the batches it settles itself

    def submit(
        self, units: list[UnitRow], call_table: pa.Table, definition_sets: DefinitionSets = None
    ) -> None:
        """Judge these units; results come back in submission order."""
        self._submitted += 1
        batch = self._submitted
        if self.workers <= 1 or len(units) < self.min_parallel:
            self._pending.append((batch, (units, call_table, definition_sets)))
            return
        if self._pool is None:
            # spawn, not fork: the parent holds a DuckDB connection and exporter threads.
            self._pool = ProcessPoolExecutor(
                self.workers, mp_context=get_context("spawn"), initializer=_init_worker, initargs=(self.ctx,)
            )
        step = -(-len(units) // self.workers)
        trace_ids = pa.array([u.trace_id for u in units])
        for start in range(0, len(units), step):
            mask = pc.is_in(call_table.column("trace_id"), value_set=trace_ids[start : start + step])
            future = self._pool.submit(
                _work, units[start : start + step], call_table.filter(mask), definition_sets
            )
            self._pending.append((batch, future))

    def _next(self) -> ResultTables:
        _, item = self._pending.popleft()
        if isinstance(item, Future):
            return item.result()
        units, call_table, definition_sets = item
        return settle_batch(units, call_table, _with_definitions(self.ctx, definition_sets), self._memo)

    def results(self) -> Iterator[ResultTables]:
        """Each batch's tables in submission order, as soon as it is judged."""
        while self._pending:
            yield self._next()

    def stream(self, batches: Iterable[tuple[Batch, bool]]) -> Iterator[tuple[ResultTables, bool]]:
        """Judge `(batch, is_last)` in order, reading each when it is needed: yields every part's
        tables and whether it is the last part of the last batch. Bounded: in this process one
        batch at a time; on workers the next batch is judged while the current one's tables are
        handed out, never more (decision 100)."""
        source = iter(batches)
        final = 0  # the number of the batch flagged last
        while True:
            # on workers, one batch ahead: they settle it while this process writes
            while len({b for b, _ in self._pending}) < (2 if self._pool is not None else 1):
                upcoming = next(source, None)
                if upcoming is None:
                    break
                self.submit(*upcoming[0])
                if upcoming[1]:
                    final = self._submitted
            if not self._pending:
                return
            batch = self._pending[0][0]
            tables = self._next()
            yield tables, batch == final and not any(b == batch for b, _ in self._pending)

    def __enter__(self) -> SettlePool:
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
