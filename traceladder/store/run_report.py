"""What a report reads, at any size: the summary of a set of judged traces as SQL aggregates, and
their per-trace rows a batch at a time (issue 36).

A report's traces are a *scope*: a run's `trace_results` rows, or an explicit list of trace ids
(the live page's window). `scope_of_run` holds only the run id, `scope_of_traces` the ids it is
given; report order is `case_id, repeat_index, trace_id`. `aggregates` answers every
summary figure with a few GROUP BY queries, so its cost and memory do not grow with the evidence;
`row_batches` yields the per-trace rows (results, rung rows, findings, tool calls, model-request
notes, judgments) `batch` traces at a time, so a renderer holds one batch, never the run.

Storage only: rows and counts, never the ladder or a document (`report.build` shapes them).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

import duckdb

from traceladder.errors import UserError
from traceladder.store.case_level import case_level
from traceladder.store.db import Store, trace_id_table
from traceladder.store.readers import RunRows, dict_rows, json_or_none, request_notes

_T = TypeVar("_T")
BATCH_TRACES = 1_000  # per-trace rows held at once by a streaming renderer
REPORT_MEMORY = "64MB"  # DuckDB's share while a report (or a comparison) is read (decision 241)
# Report order: by case and repeat, a multi-turn case's turns in the order played (`case_turns`).
_ORDER = "s.case_id, s.repeat_index, ct.turn NULLS FIRST, s.trace_id"
_WITH_TURN = "LEFT JOIN case_turns ct ON ct.trace_id = s.trace_id"
# Report order as one key without NULLs (DuckDB sorts NULLs last), so a page can start after the
# last key of the one before: `(k) > $after` is exactly "comes later in `ORDER BY {_ORDER}`".
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
        # the run id in a one-row table, so the scope's relation carries no literal
        store.conn.execute(f"CREATE TEMP TABLE {name} AS SELECT $run::VARCHAR AS run_id", {"run": run_id})
        size = store.conn.execute(
            "SELECT count(*) FROM trace_results WHERE run_id = $run", {"run": run_id}
        ).fetchall()[0][0]
    if not size:
        raise UserError(f"run {run_id} has no results; run `traceladder evaluate --run {run_id}` first")
    return Scope(f"(SELECT * FROM trace_results WHERE run_id = (SELECT run_id FROM {name}))", int(size))


def scope_of_traces(store: Store, trace_ids: Sequence[str]) -> Scope:
    """These traces' results (those that have one), in report order. The ids are kept in a
    temporary table (the caller holds them in memory already: the live page's window)."""
    name = f"report_traces_{next(_SCOPES)}"
    with store.registered("wanted_traces", trace_id_table(trace_ids)) as conn:
        conn.execute(f"CREATE TEMP TABLE {name} AS SELECT DISTINCT trace_id FROM wanted_traces")
        rows = f"(SELECT * FROM trace_results SEMI JOIN {name} USING (trace_id))"
        size = conn.execute(f"SELECT count(*) FROM {rows}").fetchall()[0][0]
    return Scope(rows, int(size))


# Whether any trace of the scope is a turn of a multi-turn case: `case_turns` (one row per turn
# played, small) is the side the join hashes, and a store without turns answers at once.
_HAS_TURNS = "SELECT EXISTS (SELECT 1 FROM case_turns WHERE trace_id IN (SELECT trace_id FROM scoped))"


@contextmanager
def _scoped(store: Store, scope: Scope) -> Iterator[duckdb.DuckDBPyConnection]:
    """The connection, under the store's lock, with `scoped` (the scope's `trace_results` rows),
    `scope_traces` (their ids) and `scored` (its case runs, `store.case_level`) as views.

    A scope none of whose traces is a turn of a multi-turn case has one case run per trace, so
    `scored` is then `scoped` itself: the case-level relation (windowed joins over `case_turns`
    and the conversations) costs each query that reads it ~15 ms even at 10k traces, for rows
    identical to the scope's (decision 601)."""
    with store.lock:
        conn = store.conn
        conn.execute(f"CREATE OR REPLACE TEMP VIEW scoped AS SELECT * FROM {scope.rows}")
        conn.execute("CREATE OR REPLACE TEMP VIEW scope_traces AS SELECT trace_id FROM scoped")
        turns = conn.execute(_HAS_TURNS).fetchall()[0][0]
        scored = case_level("scoped") if turns else "SELECT * FROM scoped"
        conn.execute(f"CREATE OR REPLACE TEMP VIEW scored AS {scored}")
        try:
            yield conn
        finally:
            conn.execute("DROP VIEW IF EXISTS scored")
            conn.execute("DROP VIEW IF EXISTS scope_traces")
            conn.execute("DROP VIEW IF EXISTS scoped")


@dataclass(frozen=True)
class Aggregates:
    """Every figure of a report's summary, counted in SQL over one scope.

    `verdicts`: (dimension, verdict, traces); `classes`: (failure class, FAIL traces) and
    `class_cases`: failure class → the case ids (trace ids for traces with no case) of its FAILs,
    for the `top` most frequent classes only; `tools`: (tool, FAIL traces a finding names it in);
    `scores`: (rung name, score key, mean over PASS and FAIL traces), in ladder order; `settled_at`:
    (tier as text, FAIL traces); `ladder`: (rung name, rung, status, traces); `settled`: (rung name,
    verdict, traces it settled); `judge_statuses`: rung 5's status → traces; `judgments`: the
    judge's figures (see `_JUDGMENTS`), None when the scope has no judgment; `failing`: the first
    `failing_limit` FAIL or AGENT_ERROR results in report order, and `failing_count` all of them.
    Every figure but the last counts case runs (`scored`: a multi-turn case run once);
    `trace_verdicts` counts each judged trace (each turn its own), as JUnit lists them.
    """

    verdicts: list[tuple[str | None, str, int]]
    classes: list[tuple[str | None, int]]
    class_cases: dict[str | None, list[str]]
    tools: list[tuple[str, int]]
    scores: list[tuple[str, str, float]]
    settled_at: list[tuple[str, int]]
    ladder: list[tuple[str, int, str, int]]
    settled: list[tuple[str, str, int]]
    judge_statuses: dict[str, int]
    judgments: dict[str, Any] | None
    failing: list[dict[str, Any]]
    failing_count: int
    evaluator_version: str | None
    trace_verdicts: dict[str, int] = field(default_factory=dict)


# The case-level counts, one scan of `scored` (the case-level relation is a union of windowed
# joins: each query over it costs ~15 ms to plan and run even at 10k traces, and the summary asked
# five of them; decision 600). Grouping set 0 (dimension, verdict) gives the verdict counts and the
# failing count, 1 (verdict, failure_class) the failure classes, 2 (verdict, settled tier) where
# FAILs were settled; `GROUPING()` tells the sets apart (NULL is also a class and a dimension).
_CASE_COUNTS = """
SELECT CASE grouping(dimension, failure_class, settled) WHEN 3 THEN 0 WHEN 5 THEN 1 ELSE 2 END AS kind,
       dimension, verdict, failure_class, settled, count(*), verdict IN ('FAIL', 'AGENT_ERROR') AS failing
FROM (SELECT dimension, verdict, failure_class, settled_at::VARCHAR AS settled FROM scored)
GROUP BY GROUPING SETS ((dimension, verdict), (verdict, failure_class), (verdict, settled))
HAVING grouping(dimension, failure_class, settled) = 3
    OR (verdict = 'FAIL' AND (grouping(dimension, failure_class, settled) = 5 OR settled IS NOT NULL))
"""
# The case ids (trace ids for traces with no case) of the FAILs of the `top` classes, in one scan.
_CLASS_CASES = """
SELECT failure_class, list(DISTINCT coalesce(case_id, trace_id) ORDER BY coalesce(case_id, trace_id))
FROM scored WHERE verdict = 'FAIL'
    AND (list_contains($classes::VARCHAR[], failure_class) OR ($with_null AND failure_class IS NULL))
GROUP BY 1
"""
# The per-trace tables (findings, rung_results) are joined with the scope one partition of its
# traces at a time (`part_traces`: trace_id, verdict; `_PARTITION_TRACES` a partition): a join's
# hash table holds the partition's trace ids, so the summary's memory does not grow with the run
# (decision 350). Every figure below is additive over partitions of traces.
#
# The tools findings of FAIL traces name, by FAIL traces (`$known`: only these tool names; NULL:
# any). A finding without a tool (a rung-3 order problem) implicates none.
_TOOLS = """
SELECT f.tool, count(DISTINCT f.trace_id) FROM findings f
SEMI JOIN (SELECT trace_id FROM part_traces WHERE verdict = 'FAIL') s USING (trace_id)
WHERE coalesce(f.tool, '') <> '' AND ($known IS NULL OR list_contains($known, f.tool))
GROUP BY 1
"""
# Each named rung score's sum and count over the PASS and FAIL traces, with where the rung and the
# key come in ladder order (its rung number, the key's position in the rows that store it). One
# unnest of the map's entries, the position looked up in its keys: ~20% less CPU than unnesting
# keys, values and subscripts side by side (decision 490).
_SCORES = """
SELECT rung_name, e.key, sum(e.value), count(e.value), min(rung), min(list_position(keys, e.key)) FROM (
    SELECT rung, rung_name, map_keys(scores) AS keys, unnest(map_entries(scores)) AS e
    FROM rung_results SEMI JOIN (SELECT trace_id FROM part_traces WHERE verdict IN ('PASS', 'FAIL')) s
        USING (trace_id)
    WHERE scores IS NOT NULL
)
WHERE e.value IS NOT NULL
GROUP BY rung_name, e.key
"""
_LADDER = """
SELECT rung_name, min(rung), status, count(*) FROM rung_results SEMI JOIN part_traces USING (trace_id)
GROUP BY rung_name, status
"""
# The trace-level counts, one scan of `scoped`: each verdict's traces (grouping set 1) and the
# verdicts each rung settled (set 0).
_TRACE_COUNTS = """
SELECT grouping(settled_by), settled_by, verdict, count(*) FROM scoped
GROUP BY GROUPING SETS ((settled_by, verdict), (verdict))
"""
_PARTITION_TRACES = 100_000
# DuckDB's cap while the partitions are joined: blocks a join reads stay cached up to the cap, so
# under the command's 64 MB the cache grew with the tables (~30 MB more at 200k traces than at
# 20k); a partition's join fits in 24 MB. Every partition scans the whole per-trace tables, so
# fewer, larger partitions cost less CPU: 100k traces under 24 MB, not 50k under 16 (decision
# 432). A join that does not fit (very long trace ids) is counted again at the command's cap:
# slower in memory, never a wrong figure.
_SUMMARY_MEMORY = "24MB"
# Rung 5's figures: what the judge decided per outcome, and what the charged ones (judged or
# error) cost. `priced` is false when a charged judgment with tokens has no price.
_JUDGMENTS = """
SELECT count(*) AS survivors,
       count(*) FILTER (WHERE outcome = 'cached') AS cache_hits,
       count(*) FILTER (WHERE outcome = 'error') AS errors,
       count(*) FILTER (WHERE outcome = 'over_budget') AS over_budget,
       count(*) FILTER (WHERE outcome = 'no_answer') AS no_answer,
       count(DISTINCT judge_trace_id) FILTER (WHERE outcome IN ('judged', 'error') AND judge_trace_id <> '')
           AS judge_calls,
       coalesce(sum(input_tokens) FILTER (WHERE outcome IN ('judged', 'error')), 0) AS input_tokens,
       coalesce(sum(output_tokens) FILTER (WHERE outcome IN ('judged', 'error')), 0) AS output_tokens,
       bool_and(cost_usd IS NOT NULL) FILTER (WHERE outcome IN ('judged', 'error')
           AND (coalesce(input_tokens, 0) <> 0 OR coalesce(output_tokens, 0) <> 0)) AS priced,
       sum(cost_usd) FILTER (WHERE outcome IN ('judged', 'error')
           AND (coalesce(input_tokens, 0) <> 0 OR coalesce(output_tokens, 0) <> 0)) AS cost_usd,
       list(DISTINCT judge_model ORDER BY judge_model) AS models
FROM trace_judgments SEMI JOIN scope_traces USING (trace_id)
"""
_FAILING_COLUMNS = (
    "case_id",
    "repeat_index",
    "trace_id",
    "verdict",
    "taxonomy",
    "settled_at",
    "explanation",
    "turn",
)
_FAILING = f"""
SELECT s.case_id, s.repeat_index, s.trace_id, s.verdict, s.failure_class AS taxonomy, s.settled_at,
       s.explanation, ct.turn
FROM scored s {_WITH_TURN} WHERE s.verdict IN ('FAIL', 'AGENT_ERROR')
ORDER BY {_ORDER} LIMIT $limit
"""


def aggregates(
    store: Store,
    scope: Scope,
    *,
    known_tools: Sequence[str] = (),
    judge_rung: str = "llm_judge",
    top: int = 5,
    failing_limit: int = 20,
) -> Aggregates:
    """The summary figures of `scope` (see `Aggregates`); `known_tools` limits the implicated
    tools to these names (empty: any tool a finding names)."""
    with _scoped(store, scope) as conn:

        def rows(sql: str, params: Any = None) -> list[tuple[Any, ...]]:
            return conn.execute(sql, params).fetchall()

        counts = _case_counts(rows(_CASE_COUNTS))
        classes = counts.classes
        ranked = [cls for cls, _ in sorted(classes, key=lambda kv: (-kv[1], str(kv[0])))[:top]]
        wanted = {"classes": [c for c in ranked if c is not None], "with_null": None in ranked}
        found = dict(rows(_CLASS_CASES, wanted)) if ranked else {}
        class_cases = {cls: list(found.get(cls) or []) for cls in ranked}
        tools, scores, ladder = _per_trace_figures(conn, len(scope), list(known_tools) or None)
        judged = rows(_JUDGMENTS)[0]
        names = ("survivors", "cache_hits", "errors", "over_budget", "no_answer", "judge_calls",
                 "input_tokens", "output_tokens", "priced", "cost_usd", "models")  # fmt: skip
        judgments = dict(zip(names, judged, strict=True)) if judged[0] else None
        failing = [
            dict(zip(_FAILING_COLUMNS, r, strict=True)) for r in rows(_FAILING, {"limit": failing_limit})
        ]
        version = rows(
            "SELECT evaluator_version FROM scoped ORDER BY case_id, repeat_index, trace_id LIMIT 1"
        )
        settled: list[tuple[str, str, int]] = []
        trace_verdicts: dict[str, int] = {}
        for by_verdict, name, verdict, n in rows(_TRACE_COUNTS):
            if by_verdict:
                trace_verdicts[verdict] = int(n)
            elif name is not None:
                settled.append((name, verdict, int(n)))
        return Aggregates(
            verdicts=counts.verdicts,
            classes=classes,
            class_cases=class_cases,
            tools=tools,
            scores=scores,
            settled_at=counts.settled_at,
            ladder=ladder,
            settled=settled,
            judge_statuses={status: n for name, _, status, n in ladder if name == judge_rung},
            judgments=judgments,
            failing=failing,
            failing_count=counts.failing_count,
            evaluator_version=version[0][0] if version else None,
            trace_verdicts=trace_verdicts,
        )


@dataclass(frozen=True)
class _CaseCounts:
    verdicts: list[tuple[str | None, str, int]]
    classes: list[tuple[str | None, int]]
    settled_at: list[tuple[str, int]]
    failing_count: int


def _case_counts(found: list[tuple[Any, ...]]) -> _CaseCounts:
    """`_CASE_COUNTS`' rows split into its grouping sets: the verdicts by dimension, the FAILs by
    class and by the tier that settled them (a FAIL a conversation check decided, at a turn that
    itself passed, no rung settled: not counted there), and the FAIL or AGENT_ERROR case runs."""
    counts = _CaseCounts([], [], [], 0)
    failing = 0
    for kind, dimension, verdict, cls, settled, n, is_failing in found:
        if kind == 0:
            counts.verdicts.append((dimension, verdict, int(n)))
            failing += int(n) if is_failing else 0
        elif kind == 1:
            counts.classes.append((cls, int(n)))
        else:
            counts.settled_at.append((settled, int(n)))
    return _CaseCounts(counts.verdicts, counts.classes, counts.settled_at, failing)


def _per_trace_figures(
    conn: duckdb.DuckDBPyConnection, size: int, known: list[str] | None
) -> tuple[list[tuple[str, int]], list[tuple[str, str, float]], list[tuple[str, int, str, int]]]:
    """(tools, scores, ladder) of `Aggregates`, summed over partitions of the scope's traces (by
    a hash of the trace id), each joined with `findings` / `rung_results` on its own."""
    return _capped(conn, lambda: _partitioned(conn, size, known))


def _capped(conn: duckdb.DuckDBPyConnection, read: Callable[[], _T]) -> _T:
    """`read()` under DuckDB's `_SUMMARY_MEMORY` cap, so the blocks it reads do not stay cached up
    to the command's larger cap; again under that cap if it does not fit (never a wrong answer)."""
    before = conn.sql("SELECT current_setting('memory_limit')").fetchall()[0][0]
    conn.execute(f"SET memory_limit = '{_SUMMARY_MEMORY}'")
    try:
        return read()
    except duckdb.OutOfMemoryException:
        conn.execute(f"SET memory_limit = '{before}'")
        return read()
    finally:
        conn.execute(f"SET memory_limit = '{before}'")


def _partitioned(
    conn: duckdb.DuckDBPyConnection, size: int, known: list[str] | None
) -> tuple[list[tuple[str, int]], list[tuple[str, str, float]], list[tuple[str, int, str, int]]]:
    parts = max(1, -(-size // _PARTITION_TRACES))
    tools: dict[str, int] = {}
    scores: dict[tuple[str, str], list[Any]] = {}  # sum, count, rung, position
    ladder: dict[tuple[str, str], list[int]] = {}  # rung, traces
    for part in range(parts):
        conn.execute(
            "CREATE OR REPLACE TEMP VIEW part_traces AS SELECT trace_id, verdict FROM scoped"
            + (f" WHERE hash(trace_id) % {parts} = {part}" if parts > 1 else "")
        )
        try:
            for tool, n in conn.execute(_TOOLS, {"known": known}).fetchall():
                tools[tool] = tools.get(tool, 0) + int(n)
            for name, key, total, n, rung, pos in conn.execute(_SCORES).fetchall():
                seen = scores.setdefault((name, key), [0.0, 0, rung, pos])
                seen[0] += total
                seen[1] += n
                seen[2], seen[3] = min(seen[2], rung), min(seen[3], pos)
            for name, rung, status, n in conn.execute(_LADDER).fetchall():
                count = ladder.setdefault((name, status), [rung, 0])
                count[0], count[1] = min(count[0], rung), count[1] + int(n)
        finally:
            conn.execute("DROP VIEW IF EXISTS part_traces")
    ordered = sorted(scores.items(), key=lambda kv: (kv[1][2], kv[0][0], kv[1][3], kv[0][1]))
    return (
        list(tools.items()),
        [(name, key, float(total / n)) for (name, key), (total, n, _, _) in ordered],
        [(name, int(rung), status, n) for (name, status), (rung, n) in ladder.items()],
    )


def run_verdict_counts(store: Store, run_id: str) -> dict[str, int]:
    """Verdict → case runs of `run_id`: the counts behind the pass rate `report` prints and `gate`
    decides on (PASS / (PASS + FAIL) of every judged trace of the run, a multi-turn case run
    counted once with its conversation's verdict: `store.case_level`)."""
    of_run = case_level("(SELECT * FROM trace_results WHERE run_id = $run)")
    rows = store.fetchall(f"SELECT verdict, count(*) FROM ({of_run}) GROUP BY 1", {"run": run_id})
    if not rows:
        raise UserError(f"run {run_id} has no results; run `traceladder evaluate --run {run_id}` first")
    return {v: int(n) for v, n in rows}


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
        found = _capped(store.conn, lambda: _batch_rows(store.conn, scope, after, batch))
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
        f"FROM {scope.rows} s {_WITH_TURN} "
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
