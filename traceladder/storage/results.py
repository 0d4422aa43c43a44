"""Bulk evaluation from the store: read traces in batches, judge, write results and findings.

Reads are set-based — one query for the traces to judge, then one query per batch of traces for
their tool calls (never one per trace). Writes go out as Arrow batches inside one transaction that
first removes the run's previous results, so re-evaluating replaces, never duplicates.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pyarrow as pa

from traceladder.cases.model import Case
from traceladder.evaluators.judge import JudgeContext
from traceladder.storage.db import Store
from traceladder.storage.judging import (
    FINDING_SCHEMA,
    RESULT_SCHEMA,
    Judges,
    Unit,
    empty_table,
    paused_gc,
)

BATCH_TRACES = 20_000

# The judging units: every trace whose root or invoke_agent span names a case. Suite runs and
# imported traces alike; a case_runs row, when there is one, adds the agent status. A trace of one
# of our own runs without a case_runs row is an attempt that never finished (Ctrl-C, a failed
# write): `--resume` runs that case again, so the abandoned attempt is not a unit.
_UNITS = """
WITH tagged AS (
    SELECT trace_id,
           attributes->>'$."traceladder.case.id"' AS case_id,
           coalesce(attributes->>'$."traceladder.run.id"', 'external') AS run_id,
           coalesce(TRY_CAST(attributes->>'$."traceladder.case.repeat"' AS INTEGER), 0) AS repeat_index,
           status_code, error_type
    FROM spans
    WHERE (operation = 'invoke_agent' OR parent_span_id IS NULL)
      AND attributes->>'$."traceladder.case.id"' IS NOT NULL
)
SELECT t.run_id, t.case_id, t.repeat_index, t.trace_id,
       coalesce(cr.agent_status, CASE WHEN t.status_code = 'ERROR' THEN 'error' ELSE 'ok' END),
       coalesce(cr.error_type, t.error_type)
FROM tagged t
LEFT JOIN case_runs cr ON cr.trace_id = t.trace_id
WHERE ($run IS NULL OR t.run_id = $run)
  AND (cr.trace_id IS NOT NULL OR t.run_id NOT IN (SELECT run_id FROM runs))
QUALIFY row_number() OVER (PARTITION BY t.trace_id ORDER BY t.case_id) = 1
ORDER BY t.run_id, t.case_id, t.repeat_index
"""

_CALLS = """
SELECT tc.trace_id, tc.ordinal, tc.tool_name, tc.arguments_raw, tc.status, tc.result
FROM tool_calls tc SEMI JOIN unit_traces u ON tc.trace_id = u.trace_id
ORDER BY tc.trace_id, tc.ordinal
"""


@dataclass(frozen=True)
class EvaluationSummary:
    units: int
    unknown_cases: tuple[str, ...]
    runs: tuple[str, ...]


def read_units(store: Store, run_id: str | None) -> list[Unit]:
    return [Unit(*row) for row in store.fetchall(_UNITS, {"run": run_id})]


def read_call_table(store: Store, units: Sequence[Unit]) -> pa.Table:
    """Tool calls for these traces, in one query, as Arrow (parsed later, where they are judged)."""
    traces = pa.table({"trace_id": [u.trace_id for u in units]})
    with store.lock:
        store.conn.register("unit_traces", traces)
        try:
            return store.conn.sql(_CALLS).to_arrow_table()
        finally:
            store.conn.unregister("unit_traces")


def batches(units: Sequence[Unit], size: int) -> Iterator[Sequence[Unit]]:
    for start in range(0, len(units), size):
        yield units[start : start + size]


def evaluate_store(
    store: Store,
    cases: Sequence[Case],
    ctx: JudgeContext,
    *,
    run_id: str | None = None,
    workers: int | None = None,
) -> EvaluationSummary:
    """Judge every case-tagged trace (of one run, or all) and replace their stored results."""
    by_id = {c.id: c for c in cases}
    units = read_units(store, run_id)
    unknown = sorted({u.case_id for u in units if u.case_id not in by_id})
    judged = [u for u in units if u.case_id in by_id]
    with paused_gc(), Judges(ctx, by_id, workers=workers) as judges:
        for chunk in batches(judged, BATCH_TRACES):
            judges.submit(list(chunk), read_call_table(store, chunk))
        tables = list(judges.results())
        runs = tuple(sorted({u.run_id for u in judged}))
        results_table = pa.concat_tables([t[0] for t in tables]) if tables else empty_table(RESULT_SCHEMA)
        findings_table = pa.concat_tables([t[1] for t in tables]) if tables else empty_table(FINDING_SCHEMA)
        write_results(store, results_table, findings_table, runs)
    return EvaluationSummary(len(judged), tuple(unknown), runs)


def write_results(
    store: Store, results_table: pa.Table, findings_table: pa.Table, runs: Sequence[str]
) -> None:
    """Replace the runs' results and findings with these tables, in one transaction."""
    run_list = pa.table({"run_id": pa.array(list(runs), pa.string())})
    with store.transaction() as conn:
        conn.register("eval_runs", run_list)
        conn.register("new_results", results_table)
        conn.register("new_findings", findings_table)
        try:
            conn.execute("DELETE FROM results WHERE run_id IN (SELECT run_id FROM eval_runs)")
            conn.execute("DELETE FROM findings WHERE run_id IN (SELECT run_id FROM eval_runs)")
            conn.execute(f"INSERT INTO results ({', '.join(RESULT_COLUMNS)}) SELECT * FROM new_results")
            conn.execute(f"INSERT INTO findings ({', '.join(FINDING_COLUMNS)}) SELECT * FROM new_findings")
        finally:
            for name in ("eval_runs", "new_results", "new_findings"):
                conn.unregister(name)


RESULT_COLUMNS = tuple(RESULT_SCHEMA.names)
FINDING_COLUMNS = tuple(FINDING_SCHEMA.names)
