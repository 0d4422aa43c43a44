"""The evaluation layer's entry point: read judging units from the store, assemble each trace's
inputs, run the ladder (in this process or a worker pool), write the results.

The route goes down once: workflow → here → (store readers, the ladder, store writers). Every
trace in the store is a unit; a suite trace carries a case, a trace from elsewhere may carry only
its calls — the same fold settles both, and what ran is visible per rung.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import TypeVar

import duckdb
import pyarrow as pa

from traceladder.errors import UserError
from traceladder.evaluate.assemble import NO_LIVE_OPTIONS, LiveOptions, build_context
from traceladder.evaluate.conversations import judge_conversations
from traceladder.evaluate.goals import Goals
from traceladder.evaluate.judge.phase import JudgeOptions, PhaseResult
from traceladder.evaluate.judging import SurvivorInputs, judge_pass
from traceladder.evaluate.pool import Batch, SettlePool
from traceladder.evaluate.rungs.ladder import Ladder
from traceladder.store.collector import collector_paused
from traceladder.store.conversation_results import touched_conversations
from traceladder.store.db import Store
from traceladder.store.judgments import forget_judgments
from traceladder.store.readers import (
    UnitRow,
    read_call_table,
    read_definition_sets,
    read_units_of,
    unit_roots,
)
from traceladder.store.results import ResultTables, append_result_batches
from traceladder.store.sampling_log import record_sampling
from traceladder.suite.cases.model import Case

BATCH_TRACES = 20_000  # traces read, judged and written together (decision 100)
# DuckDB's share while evaluating: enough for a batch's queries; it evicts cached blocks of the
# store file instead of keeping them, so its memory does not grow with the store (decision 101).
DUCKDB_MEMORY = "64MB"
# A read that needs more runs again with this much: the cap bounds the cache, it must never fail an
# evaluation. The units' roots are read once, by rowid, and a batch's reads touch no span
# attributes, so the size of the store never needs it (1M agent spans: no retry, decision 550);
# one large value does — DuckDB reads a 40 MB attribute, argument or result into a buffer of
# 64-256 MB whatever the cap.
DUCKDB_MEMORY_ROOMY = "1GB"
R = TypeVar("R")


def roomy_read(store: Store, read: Callable[[], R]) -> R:
    """`read()` under the cap, or once more with room when DuckDB runs out of memory."""
    try:
        return read()
    except duckdb.OutOfMemoryException:
        with store.memory_limit(DUCKDB_MEMORY_ROOMY):
            return read()


@dataclass(frozen=True)
class EvaluationSummary:
    units: int
    runs: tuple[str, ...]
    verdicts: Mapping[str, int]
    judge: PhaseResult | None = None  # what the judge phase did, when a judge is configured
    conversations: int = 0  # conversations of several turns judged with these traces


def evaluate_store(
    store: Store,
    *,
    run_id: str | None = None,
    domain: str | None = None,
    cases_path: Path | None = None,
    cases: Sequence[Case] | None = None,
    ladder: Ladder | None = None,
    workers: int | None = None,
    live: LiveOptions = NO_LIVE_OPTIONS,
    trace_ids: Sequence[str] | None = None,
    after: Callable[[duckdb.DuckDBPyConnection, EvaluationSummary], None] | None = None,
    judge: JudgeOptions | None = None,
    judge_tag: str | None = None,
    conversation_idle_since: datetime | None = None,
    settled: ResultTables | None = None,
) -> EvaluationSummary:
    """Judge every trace of the store (or of one run, or exactly `trace_ids`) and replace their
    stored results.

    `domain` is the default for case-tagged traces that name none and a schema source for traces
    without a case; `cases` are that domain's cases when the caller has already read and validated
    them (a run evaluating its own suite), instead of reading `cases_path` again; `live` adds the
    other open-path inputs (a tools file, an invariant policy) and the sampling rule; `ladder`
    defaults to the built-in rungs (plug-in rungs join only when named:
    `evaluate.rungs.ladder.load_ladder`).
    `after` runs inside the transaction that writes the results (a watermark that commits with
    them, or not at all). `judge` adds rung 5: the traces the code rungs passed are judged by it
    (`evaluate.judging`). `judge_tag` instead says rung 5 is decided elsewhere, by that judge (a
    sharded evaluation's client): the code rungs' results are recorded under its tag, the traces
    they pass left for it. The conversations the traces are in are judged too
    (`evaluate.conversations`); with `conversation_idle_since`, only those idle since then.
    `settled` are code-rung tables already computed for some of the traces with this evaluation's
    context (a run's progress line: `evaluate.code_rungs`): those traces are not settled again.
    """
    # One DuckDB thread: the reads are a small share of an evaluation (the ladder is the work),
    # and two threads' buffers outgrew the cap on 1M agent spans, forcing the roomy retry.
    with store.memory_limit(DUCKDB_MEMORY, threads=1):
        roots, named = roomy_read(store, partial(unit_roots, store, run_id, trace_ids))
        ids = roots.column("trace_id")
        if run_id and not len(ids):
            raise UserError(f"no traces of run {run_id} in {store.path}")
        ctx = build_context(
            (), ladder or Ladder(), domain=domain, cases_path=cases_path, cases=cases, named=named,
            tools_file=live.tools, policies=live.policies, sampling=live.sampling,
        )  # fmt: skip
        if judge is not None or judge_tag:
            tag = judge.tag if judge is not None else judge_tag or ""
            ctx = replace(ctx, judge_configured=True, judge_tag=tag)
        run = _Pass(store, roots, run_id, live, keep_units=judge is not None, after=after, settled=settled)
        run.conversation_idle_since = conversation_idle_since
        run.goals = Goals(ctx)
        with collector_paused(), SettlePool(ctx, workers=workers, traces=len(ids)) as pool:
            # Each batch is written, in a transaction of its own, while the next one is read and
            # (on workers) judged: memory holds about two batches, whatever the size of the store
            # (decision 100). With a judge, the survivors of every batch must be known first: the
            # first pass is kept, then rung 5 runs, then the batches are written.
            stream: Iterable[tuple[ResultTables, bool]] = run.with_reused(pool.stream(run.read()))
            if judge is not None:
                first = [tables for tables, _ in stream]
                survivors = SurvivorInputs.read(store, run.units, first, definitions=True)
                judged_ctx = replace(ctx, definition_sets=survivors.definition_sets)
                tables, run.phase = judge_pass(store, survivors, judged_ctx, first, judge, workers=workers)
                stream = ((t, k == len(tables) - 1) for k, t in enumerate(tables))
            append_result_batches(store, stream, each=run.each, last=run.finish)
        return run.summary()


class _Pass:
    """One evaluation's reading and bookkeeping: the units a batch at a time, the verdicts and
    runs seen, and what each batch's transaction and the last one also write."""

    def __init__(
        self,
        store: Store,
        roots: pa.Table,
        run_id: str | None,
        live: LiveOptions,
        *,
        keep_units: bool,
        after: Callable[[duckdb.DuckDBPyConnection, EvaluationSummary], None] | None,
        settled: ResultTables | None = None,
    ) -> None:
        self.store, self.run_id, self.live, self.after = store, run_id, live, after
        self.roots = roots  # the units, as `store.readers.unit_roots` read them
        self.ids = roots.column("trace_id")
        self.settled = settled
        self.settled_ids = (
            set(settled.traces.column("trace_id").to_pylist()) if settled is not None else set()
        )
        self.reused: list[str] = []  # the traces of `settled` this evaluation's units are
        self.keep_units = keep_units
        self.units: list[UnitRow] = []  # with a judge: every unit, for its survivors
        self.count = 0
        self.runs: set[str] = set()
        self.verdicts: Counter[str] = Counter()
        self.conversations: set[str] = set()  # judged (a conversation of two batches once)
        self.phase: PhaseResult | None = None
        self.conversation_idle_since: datetime | None = None
        self.goals: Goals | None = None  # the goal cases of the suites judged against

    def read(self) -> Iterator[tuple[Batch, bool]]:
        """The sampled units a batch at a time, each with its calls and captured tool
        definitions, and whether it is the last."""
        store, ids = self.store, self.ids
        for start in range(0, len(ids), BATCH_TRACES):
            units = roomy_read(store, partial(read_units_of, store, self.roots.slice(start, BATCH_TRACES)))
            units = [u for u in units if self.live.sampling.keeps(u.trace_id, u.error)]
            if not units:
                continue
            self.count += len(units)
            self.runs.update(u.run_id for u in units if u.run_id)
            if self.keep_units:
                self.units.extend(units)
            if self.settled_ids:
                # Only a case's trace: one with no case is judged against the tool definitions it
                # captured, which the progress line's context does not read.
                reuse = {
                    u.trace_id for u in units if u.case_id is not None and u.trace_id in self.settled_ids
                }
                self.reused += sorted(reuse)
                units = [u for u in units if u.trace_id not in reuse]
                if not units:
                    continue
            traced = [u.trace_id for u in units]
            keys = [u.definitions for u in units if u.definitions]
            calls = roomy_read(store, partial(read_call_table, store, traced))
            sets = roomy_read(store, partial(read_definition_sets, store, keys))
            yield (units, calls, sets), start + BATCH_TRACES >= len(ids)

    def with_reused(self, stream: Iterable[tuple[ResultTables, bool]]) -> Iterator[tuple[ResultTables, bool]]:
        """`stream`, then the reused tables (read while it ran), in batches of `BATCH_TRACES`; the
        last of them is the last batch."""
        if self.settled is None:
            yield from stream
            return
        for tables, _ in stream:
            yield tables, False
        for start in range(0, len(self.reused), BATCH_TRACES):
            part = pa.array(self.reused[start : start + BATCH_TRACES], pa.string())
            yield self.settled.only(part), start + BATCH_TRACES >= len(self.reused)

    def summary(self) -> EvaluationSummary:
        return EvaluationSummary(
            self.count, tuple(sorted(self.runs)), dict(self.verdicts), self.phase, len(self.conversations)
        )

    def each(self, conn: duckdb.DuckDBPyConnection, tables: ResultTables) -> None:
        """In every batch's transaction: its verdicts counted, stale judgments of its traces dropped."""
        self.verdicts.update(tables.traces.column("verdict").to_pylist())
        kept = self.phase.judged_traces if self.phase is not None else ()
        forget_judgments(conn, tables.traces.select(["trace_id"]), kept)

    def finish(self, conn: duckdb.DuckDBPyConnection) -> None:
        """In the last batch's transaction: the sampling rule, and the caller's `after`."""
        # Every conversation the evaluation's traces touch, judged once, whole, a group of
        # conversations of at most a batch's turns at a time: judging them with each batch of
        # traces judged a conversation whose turns lay in three batches three times (issue 36).
        # With room from the start (decision 534): the turns' calls are read inside this
        # transaction, where an out-of-memory error aborts it and `roomy_read` cannot retry, and one
        # 40 MB argument needs a buffer of 64-256 MB whatever the cap; a group's calls bound it.
        with self.store.memory_limit(DUCKDB_MEMORY_ROOMY):
            for group in touched_conversations(conn, self.ids, BATCH_TRACES):
                self.conversations.update(
                    judge_conversations(
                        conn, group, self.live.policies, self.conversation_idle_since, self.goals
                    )
                )
        sampling = self.live.sampling
        if not sampling.everything:  # so rates computed later know what a trace stands for
            record_sampling(conn, "evaluate", sampling.rate, sampling.keep_errors)
        if self.after is not None:
            self.after(conn, self.summary())
