"""The evaluation layer's entry point: read judging units from the store, assemble each trace's
inputs, run the ladder (in this process or a worker pool), write the results.

The route goes down once: workflow → here → (store readers, the ladder, store writers). Every
trace in the store is a unit; a suite trace carries a case, a trace from elsewhere may carry only
its calls — the same fold judges both, and what ran is visible per rung.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

import duckdb

from traceladder.errors import UserError
from traceladder.evaluation.assemble import NO_LIVE_OPTIONS, LiveOptions, build_context
from traceladder.evaluation.judging import SurvivorInputs, judge_pass
from traceladder.evaluation.pool import Judges, paused_gc
from traceladder.evaluators.ladder import Ladder
from traceladder.judge.phase import JudgeOptions, PhaseResult
from traceladder.storage.db import Store, trace_id_table
from traceladder.storage.judgments import forget_judgments
from traceladder.storage.readers import read_call_table, read_definition_sets, read_units
from traceladder.storage.results import ResultTables, write_result_batches
from traceladder.storage.sampling_log import record_sampling

BATCH_TRACES = 20_000
T = TypeVar("T")


@dataclass(frozen=True)
class EvaluationSummary:
    units: int
    runs: tuple[str, ...]
    verdicts: Mapping[str, int]
    judge: PhaseResult | None = None  # what the judge phase did, when a judge is configured


def batches(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def evaluate_store(
    store: Store,
    *,
    run_id: str | None = None,
    domain: str | None = None,
    cases_path: Path | None = None,
    ladder: Ladder | None = None,
    workers: int | None = None,
    live: LiveOptions = NO_LIVE_OPTIONS,
    trace_ids: Sequence[str] | None = None,
    after: Callable[[duckdb.DuckDBPyConnection, EvaluationSummary], None] | None = None,
    judge: JudgeOptions | None = None,
    judge_tag: str | None = None,
) -> EvaluationSummary:
    """Judge every trace of the store (or of one run, or exactly `trace_ids`) and replace their
    stored results.

    `domain` is the default for case-tagged traces that name none and a schema source for traces
    without a case; `live` adds the other open-path inputs (a tools file, an invariant policy)
    and the sampling rule; `ladder` defaults to the built-in rungs (plug-in rungs join only when
    named: `evaluators.ladder.load_ladder`).
    `after` runs inside the transaction that writes the results (a watermark that commits with
    them, or not at all). `judge` adds rung 5: the traces the code rungs passed are judged by it
    (`evaluation.judging`). `judge_tag` instead says rung 5 is decided elsewhere, by that judge (a
    sharded evaluation's client): the code rungs' results are recorded under its tag, the traces
    they pass left for it.
    """
    units = read_units(store, run_id, trace_ids)
    if run_id and not units:
        raise UserError(f"no traces of run {run_id} in {store.path}")
    sampled = [u for u in units if live.sampling.keeps(u.trace_id, u.error)]
    ctx = build_context(
        units, ladder or Ladder(), domain=domain, cases_path=cases_path,
        tools_file=live.tools, policies=live.policies, sampling=live.sampling,
        definition_sets=read_definition_sets(store, (u.definitions for u in sampled if u.definitions)),
    )  # fmt: skip
    if judge is not None or judge_tag:
        tag = judge.tag if judge is not None else judge_tag or ""
        ctx = replace(ctx, judge_configured=True, judge_tag=tag)
    units = sampled
    verdicts: Counter[str] = Counter()

    def counted(stream: Iterator[ResultTables]) -> Iterator[ResultTables]:
        for tables in stream:
            verdicts.update(tables.traces.column("verdict").to_pylist())
            yield tables

    with paused_gc(), Judges(ctx, workers=workers) as judges:
        for chunk in batches(units, BATCH_TRACES):
            judges.submit(list(chunk), read_call_table(store, [u.trace_id for u in chunk]))
        # Each batch is written while the workers judge the next ones; one transaction, so a
        # reader sees all old results or all new ones. With a judge, the survivors of every batch
        # must be known first: the batches are kept, then written.
        stream: Iterator[ResultTables] = judges.results()
        phase = None
        if judge is not None:
            first = list(stream)
            survivors = SurvivorInputs.read(store, units, first)
            tables, phase = judge_pass(store, survivors, ctx, first, judge, workers=workers)
            stream = iter(tables)
        runs = tuple(sorted({u.run_id for u in units if u.run_id}))
        summary = EvaluationSummary(len(units), runs, verdicts, phase)

        def finish(conn: duckdb.DuckDBPyConnection) -> None:
            judged = phase.judged_traces if phase is not None else ()
            forget_judgments(conn, trace_id_table([u.trace_id for u in units]), judged)
            if not live.sampling.everything:  # so rates computed later know what a trace stands for
                record_sampling(conn, "evaluate", live.sampling.rate, live.sampling.keep_errors)
            if after is not None:
                after(conn, summary)

        write_result_batches(store, counted(stream), after=finish)
    return EvaluationSummary(summary.units, summary.runs, dict(verdicts), phase)
