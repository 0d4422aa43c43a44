"""Sharded evaluation of a span source: each task reads one shard of traces, judges it with the
store's own evaluation, and returns Arrow result tables; the results are written once.

A shard task (`settle_shard`) writes its spans into a scratch in-memory store — the path every
span takes: dedupe, tool calls extracted by the conventions, the trace index — and runs
`evaluate_store` on it, exactly as `traceladder evaluate` does on a store. Nothing judges twice:
there is one judging path, and this module only moves spans in and result tables out.

Correctness by construction, checked anyway (`_Collector`): a shard is a function of the trace
id, so a trace is never split; every shard number must come back exactly once, every trace in a
shard's results must hash to that shard and appear in no other — otherwise nothing is written.
A task is a pure function of (source, shard), so Dask re-running it after a worker died gives the
same tables. Results of a run replace earlier results trace by trace, in one transaction:
running it again changes nothing but `evaluated_at`.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.ipc

from traceladder.errors import UserError
from traceladder.evaluate.assemble import NO_LIVE_OPTIONS, LiveOptions, build_context
from traceladder.evaluate.executors import Executor
from traceladder.evaluate.judge.phase import JudgeOptions, PhaseResult
from traceladder.evaluate.judging import SurvivorInputs, judge_pass
from traceladder.evaluate.passes import EvaluationSummary, evaluate_store
from traceladder.evaluate.rungs.ladder import Ladder
from traceladder.receive.span_sources.base import SpanSource
from traceladder.receive.span_sources.shard import shard_of
from traceladder.receive.span_sources.store import StoreSource
from traceladder.store.db import Store, open_store, trace_id_table
from traceladder.store.judgments import forget_judgments
from traceladder.store.readers import read_units
from traceladder.store.results import (
    FINDING_SCHEMA,
    RUNG_RESULT_SCHEMA,
    TRACE_RESULT_SCHEMA,
    ResultTables,
    write_result_batches,
)
from traceladder.store.sampling_log import record_sampling
from traceladder.store.writes import write_batch

DEFAULT_SHARDS = 8


@dataclass(frozen=True)
class ShardJob:
    """What every shard task needs: plain data, pickled once per task by Dask."""

    source: SpanSource
    shards: int
    run_id: str | None = None
    domain: str | None = None
    cases_path: Path | None = None
    live: LiveOptions = NO_LIVE_OPTIONS
    judge_tag: str | None = None  # rung 5 runs on the client, by this judge (see `evaluate_source`)
    ladder: Ladder = Ladder()  # the built-in rungs plus the plug-ins named (`evaluate.rungs.ladder`)


@dataclass(frozen=True)
class ShardResult:
    shard: int
    spans: int
    tables: ResultTables
    survivors: SurvivorInputs | None = None  # with a judge: what it needs of the shard's PASS traces


def _read_back(scratch: Store) -> ResultTables:
    """The scratch store's results as Arrow. `judged_seq` is an arrival number of the scratch
    store, meaningless anywhere else: it is left empty."""

    def table(name: str, schema: pa.Schema, order: str) -> pa.Table:
        got = scratch.conn.sql(
            f"SELECT {', '.join(schema.names)} FROM {name} ORDER BY {order}"
        ).to_arrow_table()
        return got.cast(schema)

    traces = table("trace_results", TRACE_RESULT_SCHEMA, "trace_id")
    traces = traces.set_column(
        traces.schema.get_field_index("judged_seq"), "judged_seq", pa.nulls(traces.num_rows, pa.int64())
    )
    return ResultTables(
        traces,
        table("rung_results", RUNG_RESULT_SCHEMA, "trace_id, rung, rung_name"),
        table("findings", FINDING_SCHEMA, "ALL"),
    )


def settle_shard(job: ShardJob, shard: int) -> ShardResult:
    """Read one shard, judge it in a scratch store, return its result tables (runs on a worker)."""
    spans = job.source.read_shard(shard, job.shards)
    with Store(Path(":memory:")) as scratch:
        write_batch(scratch, spans=spans)
        units = read_units(scratch, job.run_id)
        if job.run_id is not None and not units:
            return ShardResult(shard, spans.num_rows, ResultTables.concat([]))
        evaluate_store(
            scratch, run_id=job.run_id, domain=job.domain, cases_path=job.cases_path, workers=1,
            ladder=job.ladder, live=job.live, judge_tag=job.judge_tag,
        )  # fmt: skip
        tables = _read_back(scratch)
        survivors = SurvivorInputs.read(scratch, units, [tables], definitions=True) if job.judge_tag else None
        return ShardResult(shard, spans.num_rows, tables, survivors)


@dataclass
class _Collector:
    """Checks every shard's result as it arrives (see the module docstring) and counts verdicts."""

    shards: int
    done: set[int] = field(default_factory=set)
    traces: set[str] = field(default_factory=set)
    verdicts: Counter[str] = field(default_factory=Counter)
    runs: set[str] = field(default_factory=set)
    spans: int = 0

    def accept(self, result: ShardResult) -> ResultTables:
        if result.shard in self.done or not 0 <= result.shard < self.shards:
            raise RuntimeError(f"shard {result.shard} of {self.shards} came back twice or out of range")
        self.done.add(result.shard)
        ids = result.tables.traces.column("trace_id").to_pylist()
        for trace_id in ids:
            if shard_of(trace_id, self.shards) != result.shard or trace_id in self.traces:
                raise RuntimeError(f"trace {trace_id} judged in the wrong shard or twice")
            self.traces.add(trace_id)
        self.verdicts.update(result.tables.traces.column("verdict").to_pylist())
        self.runs.update(r for r in result.tables.traces.column("run_id").to_pylist() if r)
        self.spans += result.spans
        return result.tables

    def missing(self) -> list[int]:
        return sorted(set(range(self.shards)) - self.done)


def evaluate_source(
    db: Path, source: SpanSource, executor: Executor, job: ShardJob, judge: JudgeOptions | None = None
) -> tuple[EvaluationSummary, int]:
    """Judge every trace of `source` in `job.shards` shard tasks on `executor`; write the results
    into the store at `db` in one transaction. Returns the summary and the spans read.

    With a `judge`, rung 5 runs here, once, after every shard came back: the shards return what it
    needs of the traces their code rungs passed; the judge's cache, spans and budget live in `db`,
    exactly as when `evaluate` judges a store (`evaluate.judging`)."""
    source.check()
    if judge is not None:
        job = replace(job, judge_tag=judge.tag)
    collector = _Collector(job.shards)
    task = partial(settle_shard, job)
    survivors: list[SurvivorInputs] = []

    def stream() -> Iterator[ResultTables]:
        for result in executor.map_unordered(task, range(job.shards)):
            if result.survivors is not None:
                survivors.append(result.survivors)
            yield collector.accept(result)
        if collector.missing():
            raise RuntimeError(f"shards {collector.missing()} never came back")
        if job.run_id is not None and not collector.traces:  # as the in-store evaluate says it
            raise UserError(f"no traces of run {job.run_id} in {source.name}")

    phase: PhaseResult | None = None

    def finish(conn: duckdb.DuckDBPyConnection) -> None:
        judged = phase.judged_traces if phase is not None else ()
        forget_judgments(conn, trace_id_table(sorted(collector.traces)), judged)
        sampling = job.live.sampling
        if not sampling.everything:
            record_sampling(conn, "evaluate", sampling.rate, sampling.keep_errors)

    same_store = isinstance(source, StoreSource) and source.path.resolve() == db.resolve()
    tables: list[ResultTables] = []
    if same_store and judge is None:
        # Workers open the store read-only, which DuckDB refuses while this process holds it for
        # writing: every shard's tables wait on disk, not in memory, until all came back.
        with open_store(db):
            pass  # fold what a receiver acknowledged, so the shards see it
        with tempfile.TemporaryDirectory(prefix="traceladder-shards-") as spill:
            parked = [_park(Path(spill) / str(k), t) for k, t in enumerate(stream())]
            with open_store(db) as store:
                write_result_batches(store, (_unpark(p) for p in parked), after=finish)
    elif judge is not None:
        # Collect first, then write. With a judge: the survivors of every shard must be known. When
        # the source is the results store: workers open it read-only, which DuckDB refuses while
        # this process holds it for writing.
        if same_store:
            with open_store(db):
                pass  # fold what a receiver acknowledged, so the shards see it
        tables = list(stream())
        with open_store(db) as store:
            if judge is not None:
                tables, phase = _judge_here(store, job, judge, tables, survivors)
            write_result_batches(store, tables, after=finish)
    else:
        with open_store(db) as store:
            write_result_batches(store, stream(), after=finish)
    verdicts = collector.verdicts
    if phase is not None:  # the survivors' verdicts are now the judged ones
        verdicts = Counter(v for t in tables for v in t.traces.column("verdict").to_pylist())
    summary = EvaluationSummary(len(collector.traces), tuple(sorted(collector.runs)), dict(verdicts), phase)
    return summary, collector.spans


def _park(path: Path, tables: ResultTables) -> Path:
    """One shard's tables into Arrow IPC files under `path` (read back by `_unpark`)."""
    path.mkdir()
    for name, table in (("traces", tables.traces), ("rungs", tables.rungs), ("findings", tables.findings)):
        with pa.OSFile(str(path / name), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
    return path


def _unpark(path: Path) -> ResultTables:
    def read(name: str) -> pa.Table:
        with pa.memory_map(str(path / name)) as source:
            return pa.ipc.open_file(source).read_all()

    return ResultTables(read("traces"), read("rungs"), read("findings"))


def _judge_here(
    store: Store, job: ShardJob, judge: JudgeOptions, first: list[ResultTables], parts: list[SurvivorInputs]
) -> tuple[list[ResultTables], PhaseResult]:
    """Rung 5 over every shard's survivors, the survivors folded again with their judgments."""
    inputs = SurvivorInputs.concat(parts)
    ctx = build_context(
        inputs.units, job.ladder, domain=job.domain, cases_path=job.cases_path,
        tools_file=job.live.tools, policies=job.live.policies, sampling=job.live.sampling,
        definition_sets=inputs.definition_sets,
    )  # fmt: skip
    ctx = replace(ctx, judge_configured=True, judge_tag=judge.tag)
    return judge_pass(store, inputs, ctx, first, judge)
