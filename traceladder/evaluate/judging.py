"""Rung 5 inside an evaluation: the code rungs judge every trace first; the traces they all passed
(verdict PASS) go to the judge phase (`traceladder.evaluate.judge.phase`); then those survivors — and only
they — are judged again with their judgment as an input, so the ladder's one fold decides the
verdict. A trace a code rung failed never reaches the judge; its rung 5 says "sent to triage".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import pyarrow as pa
import pyarrow.compute as pc

from traceladder.evaluate.assemble import Context, raw_calls_by_trace
from traceladder.evaluate.judge.phase import JudgeOptions, PhaseResult, Survivor, judge_survivors
from traceladder.evaluate.judge.trajectory import TrajectoryCall
from traceladder.evaluate.pool import SettlePool
from traceladder.evaluate.rungs.types import VerdictValue
from traceladder.exchange import Exchange
from traceladder.extract.conventions.exchanges import exchanges
from traceladder.store.db import Store
from traceladder.store.exchanges import read_exchange_rows
from traceladder.store.readers import (
    Definitions,
    UnitRow,
    read_call_table,
    read_definition_sets,
    unit_order,
)
from traceladder.store.results import ResultTables


def _survivor(
    unit: UnitRow, calls: Sequence[tuple[str, str | None, bool, str | None, int]], ctx: Context
) -> Survivor:
    name = unit.domain or (ctx.default_domain if unit.case_id else ctx.untagged_domain)
    domain = ctx.domains.get(name) if name else None
    case = domain.cases.get(unit.case_id) if domain and unit.case_id else None
    return Survivor(
        unit.trace_id,
        unit.run_id,
        case.instruction if case else None,
        domain.judge_policy if domain else None,
        tuple(TrajectoryCall(tool, raw, ok, result) for tool, raw, ok, result, _ in calls),
    )


@dataclass(frozen=True)
class SurvivorInputs:
    """What rung 5 needs of the traces every code rung passed, read where their spans are: the
    units, their tool calls, their exchanges (instruction, final answer, root span) and the sets of
    tool definitions they captured. Plain data: a shard task returns it to the client, which judges."""

    units: list[UnitRow]
    calls: pa.Table
    exchanges: dict[str, Exchange]
    definition_sets: dict[str, Definitions]

    @classmethod
    def read(
        cls,
        store: Store,
        units: Sequence[UnitRow],
        first: Sequence[ResultTables],
        *,
        definitions: bool = False,
    ) -> SurvivorInputs:
        """The inputs of the units `first` passed. `definitions`: read their captured tool
        definitions too (for a context built elsewhere; an evaluation of `store` has them)."""
        passed = {
            trace_id
            for tables in first
            for trace_id, verdict in zip(
                tables.traces.column("trace_id").to_pylist(),
                tables.traces.column("verdict").to_pylist(),
                strict=True,
            )
            if verdict == VerdictValue.PASS
        }
        chosen = [u for u in units if u.trace_id in passed]
        ids = [u.trace_id for u in chosen]
        return cls(
            chosen,
            read_call_table(store, ids),
            exchanges(read_exchange_rows(store, ids, roots=True)) if ids else {},
            read_definition_sets(store, (u.definitions for u in chosen if u.definitions))
            if definitions
            else {},
        )

    @classmethod
    def concat(cls, parts: Sequence[SurvivorInputs]) -> SurvivorInputs:
        return cls(
            sorted((u for p in parts for u in p.units), key=unit_order),
            pa.concat_tables([p.calls for p in parts]),
            {k: v for p in parts for k, v in p.exchanges.items()},
            {k: v for p in parts for k, v in p.definition_sets.items()},
        )


def judge_pass(
    store: Store,
    inputs: SurvivorInputs,
    ctx: Context,
    first: list[ResultTables],
    options: JudgeOptions,
    *,
    workers: int | None = None,
    batch: int = 20_000,
) -> tuple[list[ResultTables], PhaseResult]:
    """The first pass's tables with every survivor's rows replaced by its judged ones. The judge's
    cache, spans and judgments live in `store`; the survivors' spans were read into `inputs`."""
    chosen = inputs.units
    if not chosen:
        return first, PhaseResult()
    call_table = inputs.calls
    raw = raw_calls_by_trace(call_table)
    phase = judge_survivors(
        store, [_survivor(u, raw.get(u.trace_id, ()), ctx) for u in chosen], options, inputs.exchanges
    )
    judged_ctx = replace(ctx, judgments=phase.judgments, judge_absent=phase.absent, judge_configured=True)
    with SettlePool(judged_ctx, workers=workers) as pool:
        for start in range(0, len(chosen), batch):
            part = chosen[start : start + batch]
            part_ids = pa.array([u.trace_id for u in part], pa.string())
            pool.submit(part, call_table.filter(pc.is_in(call_table.column("trace_id"), value_set=part_ids)))
        second = list(pool.results())
    survivors = pa.array(sorted(u.trace_id for u in chosen), pa.string())
    return [t.without(survivors) for t in first] + second, phase
