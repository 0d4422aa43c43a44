"""What a report reads, at any size: the summary of a set of judged traces as SQL aggregates, and
their per-trace rows a batch at a time (issue 36).

A report's traces are a *scope*: a run's `trace_results` rows, or an explicit list of trace ids
(the live page's window). `scope_of_run` holds only the run id, `scope_of_traces` the ids it is
given; report order is `case_id, repeat_index, trace_id`. `aggregates` answers every
summary figure with a few GROUP BY queries, so its cost and memory do not grow with the evidence;
`row_batches` yields the per-trace rows (results, rung rows, findings, tool calls, model-request
notes, judgments) `batch` traces at a time, so a renderer holds one batch, never the run.
The summary's SQL aggregates over a scope are `store.report_summary`.

Storage only: rows and counts, never the ladder or a document (`report.build` shapes them).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import duckdb

from traceladder.errors import UserError
from traceladder.store.db import Store, trace_id_table
from traceladder.store.readers import RunRows, dict_rows, json_or_none, request_notes

_T = TypeVar("_T")
BATCH_TRACES = 1_000  # per-trace rows held at once by a streaming renderer
REPORT_MEMORY = "64MB"  # DuckDB's share while a report (or a comparison) is read (decision 241)
# DuckDB's cap while a report's summary partitions (`store.report_summary`) or batches are read:
# blocks a join reads stay cached up to the cap, so under the command's 64 MB the cache grew with
# the tables (~30 MB more at 200k traces than at 20k); a partition's join fits in 24 MB. Every
# partition scans the whole per-trace tables, so fewer, larger partitions cost less CPU: 100k
# traces under 24 MB, not 50k under 16 (decision 432). A join that does not fit (very long trace
# ids) is counted again at the command's cap: slower in memory, never a wrong figure.
READ_MEMORY = "24MB"
# Report order: by case and repeat, a multi-turn case's turns in the order played (`case_turns`).
REPORT_ORDER = "s.case_id, s.repeat_index, ct.turn NULLS FIRST, s.trace_id"
WITH_TURN = "LEFT JOIN case_turns ct ON ct.trace_id = s.trace_id"
# Report order as one key without NULLs (DuckDB sorts NULLs last), so a page can start after the
# last key of the one before: `(k) > $after` is exactly "comes later in `ORDER BY {REPORT_ORDER}`".
_KEY = (
    "(s.case_id IS NULL, coalesce(s.case_id, ''), s.repeat_index IS NULL, coalesce(s.repeat_index, 0), "
    "ct.turn IS NOT NULL, coalesce(ct.turn, 0), s.trace_id)"
)
_AFTER = "($k0::BOOLEAN, $k1::VARCHAR, $k2::BOOLEAN, $k3::INTEGER, $k4::BOOLEAN, $k5::INTEGER, $k6::VARCHAR)"


@dataclass
class Scope:
    """The judged traces a report covers, kept in DuckDB, so a report that only counts never
    brings them (or Arrow) into Python: `rows` is a relation of their `trace_results` rows, which
    a streaming renderer pages through by report-order key (`row_batches`)."""

    rows: str
    size: int

    def __len__(self) -> int:
        return self.size


_SCOPES = itertools.count()


def scope_of_run(store: Store, run_id: str) -> Scope:
    """Every judged trace of `run_id` (one `trace_results` row each): the set `report`, `gate` and
    a baseline count (docs/report-contract.md: `case_count` is every judged trace). `UserError`
    when the run has no results."""
    name = f"report_run_{next(_SCOPES)}"
    with store.lock:
        # The run id in a variable of the connection, so the scope's relation carries no literal.
        # DuckDB folds `getvariable` to a constant when it plans a query: the filter reaches the
        # scan (and its zone maps) as a literal's would, where a one-row table's value (what this
        # was) is a join every query of the summary paid for (decision 760).
        store.conn.execute(f"SET VARIABLE {name} = $run::VARCHAR", {"run": run_id})
        size = store.conn.execute(
            "SELECT count(*) FROM trace_results WHERE run_id = $run", {"run": run_id}
        ).fetchall()[0][0]
    if not size:
        raise UserError(f"run {run_id} has no results; run `traceladder evaluate --run {run_id}` first")
    return Scope(f"(SELECT * FROM trace_results WHERE run_id = getvariable('{name}'))", int(size))


def scope_of_traces(store: Store, trace_ids: Sequence[str]) -> Scope:
    """These traces' results (those that have one), in report order. The ids are kept in a
    temporary table (the caller holds them in memory already: the live page's window)."""
    name = f"report_traces_{next(_SCOPES)}"
    with store.registered("wanted_traces", trace_id_table(trace_ids)) as conn:
        conn.execute(f"CREATE TEMP TABLE {name} AS SELECT DISTINCT trace_id FROM wanted_traces")
        rows = f"(SELECT * FROM trace_results SEMI JOIN {name} USING (trace_id))"
        size = conn.execute(f"SELECT count(*) FROM {rows}").fetchall()[0][0]
    return Scope(rows, int(size))


def capped(store: Store, read: Callable[[], _T]) -> _T:
    """`read()` under DuckDB's `READ_MEMORY` cap, so the blocks it reads do not stay cached up
    to the command's larger cap; again under that cap if it does not fit (never a wrong answer)."""
    with store.memory_limit(READ_MEMORY):
        try:
            return read()
        except duckdb.OutOfMemoryException:
            pass
    return read()


def run_header(store: Store, run_id: str) -> dict[str, Any]:
    """The `runs` row of `run_id` with its JSON decoded and times as ISO text; for traces that no
    `runs` row describes, just the id, no model and status `external`."""
    runs = dict_rows(store, "SELECT * FROM runs WHERE run_id = ?", [run_id])
    run: dict[str, Any] = runs[0] if runs else {"run_id": run_id, "model": None, "status": "external"}
    for key in ("config", "input_hashes", "selection"):
        if isinstance(run.get(key), str):
            run[key] = json.loads(run[key])
    for key in ("started_at", "finished_at"):
        if run.get(key) is not None:
            run[key] = run[key].isoformat()
    return run


def first_domain(store: Store, run_id: str) -> str | None:
    """The domain the first result of `run_id` (in report order) names, if any."""
    rows = store.fetchall(
        "SELECT domain FROM trace_results WHERE run_id = ? AND domain IS NOT NULL "
        "ORDER BY case_id, repeat_index, trace_id LIMIT 1",
        [run_id],
    )
    return rows[0][0] if rows else None


def row_batches(
    store: Store, scope: Scope, run: Mapping[str, Any], batch: int = BATCH_TRACES
) -> Iterator[RunRows]:
    """The per-trace rows of `scope`, `batch` traces at a time, in report order (one set of
    queries per batch, never per trace).

    Paged by key, not by position: each batch is the next `batch` traces after the last one's
    report-order key (`_KEY`), a top-N of the scope's rows. A table of every trace's position
    (what this did before) held ~0.27 KB a trace in DuckDB's memory for the whole report
    (decision 430); a key holds one trace's, whatever the run's size."""
    after: tuple[Any, ...] | None = None
    while True:
        rows, after = _rows_after(store, scope, after, batch, run)
        if rows is None:
            return
        yield rows


def _rows_after(
    store: Store, scope: Scope, after: tuple[Any, ...] | None, batch: int, run: Mapping[str, Any]
) -> tuple[RunRows | None, tuple[Any, ...] | None]:
    """The rows of the next `batch` traces of `scope` after the key `after` (from the first when
    None), and the last one's key; (None, None) past the end."""
    with store.lock:
        found = capped(store, lambda: _batch_rows(store.conn, scope, after, batch))
    if found is None:
        return None, None
    last, results, rungs, findings, calls, judgments, notes = found
    for r in results:
        r["evidence"] = json.loads(r["evidence"]) if r["evidence"] else {}
    for f in findings:
        f["expected"] = json_or_none(f["expected"])
        f["actual"] = json_or_none(f["actual"])
    by_trace: dict[str, list[dict[str, Any]]] = {}
    for call in calls:
        call["arguments"] = json_or_none(call["arguments_raw"])
        by_trace.setdefault(call.pop("trace_id"), []).append(call)
    return RunRows(dict(run), results, rungs, findings, by_trace, notes, judgments), last


def _batch_rows(
    conn: duckdb.DuckDBPyConnection, scope: Scope, after: tuple[Any, ...] | None, batch: int
) -> Any:
    """The raw rows of the next batch (see `_rows_after`): the last key, then results, rung rows,
    findings, tool calls, judgments and request notes; None past the end."""
    # A temporary table, not a registered Arrow one: DuckDB knows it holds `batch` rows and
    # builds each join's hash table on it, not on the per-trace table.
    conn.execute(
        f"CREATE OR REPLACE TEMP TABLE batch_traces AS SELECT s.trace_id, ct.turn, {_KEY} AS k "
        f"FROM {scope.rows} s {WITH_TURN} "
        + (f"WHERE k > {_AFTER} " if after is not None else "")
        + f"ORDER BY k LIMIT {int(batch)}",
        None if after is None else {f"k{i}": v for i, v in enumerate(after)},
    )

    def rows(sql: str) -> list[dict[str, Any]]:
        cursor = conn.execute(sql)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    try:
        last = conn.execute("SELECT k FROM batch_traces ORDER BY k DESC LIMIT 1").fetchall()
        if not last:
            return None
        return (
            tuple(last[0][0]),
            rows(
                "SELECT s.* EXCLUDE (evaluated_at), b.turn FROM trace_results s JOIN batch_traces b "
                "USING (trace_id) ORDER BY b.k"
            ),
            rows(
                "SELECT trace_id, rung, rung_name, status, scores, explanation FROM rung_results "
                "SEMI JOIN batch_traces USING (trace_id) ORDER BY trace_id, rung, rung_name"
            ),
            rows(
                "SELECT * FROM findings SEMI JOIN batch_traces USING (trace_id) "
                "ORDER BY case_id, repeat_index, rung, ordinal, code, param, message"
            ),
            rows(
                "SELECT trace_id, ordinal, tool_name AS tool, arguments_raw, status, error_type "
                "FROM tool_calls SEMI JOIN batch_traces USING (trace_id) ORDER BY trace_id, ordinal"
            ),
            rows(
                "SELECT * EXCLUDE (evaluated_at) FROM trace_judgments "
                "SEMI JOIN batch_traces USING (trace_id) ORDER BY trace_id"
            ),
            request_notes(conn),
        )
    finally:
        conn.execute("DROP TABLE IF EXISTS batch_traces")
