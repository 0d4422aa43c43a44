"""A report's summary, at any size: every figure of it as SQL aggregates over a scope of judged
traces (`store.run_report.Scope`), so its cost and memory do not grow with the evidence (issue 36).

`aggregates` answers the summary with a few GROUP BY queries (the case-level counts in one
GROUPING SETS scan, the per-trace tables joined a partition of traces at a time);
`run_verdict_counts` the counts behind the one pass rate `report` prints and `gate` decides on.
The per-trace rows a renderer pages through are `store.run_report.row_batches`.

Storage only: rows and counts, never the ladder or a document (`report.build` shapes them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import duckdb

from traceladder.errors import UserError
from traceladder.store.case_level import case_level
from traceladder.store.conversation_report import conversation_counts
from traceladder.store.db import Store
from traceladder.store.run_report import REPORT_ORDER, WITH_TURN, Scope, capped

# What the store holds of the tables only some stores fill, in one statement: multi-turn case runs
# (`case_turns`), judge verdicts (`trace_judgments`) and conversations of several turns (a turn
# past the first). A summary asks its own question of each only when the store holds any: each
# asks it of the scope's traces (a join built on them), ~2-4 ms of a 10k report's start-up for an
# answer a store without such rows knows at once (decision 760).
_HOLDS = """
SELECT EXISTS (SELECT 1 FROM case_turns), EXISTS (SELECT 1 FROM trace_judgments),
       EXISTS (SELECT 1 FROM conversations WHERE turn > 0)
"""
# Whether any trace of the scope is a turn of a multi-turn case: `case_turns` (one row per turn
# played, small) is the side the join hashes.
_HAS_TURNS = "SELECT EXISTS (SELECT 1 FROM case_turns WHERE trace_id IN (SELECT trace_id FROM {scoped}))"


@dataclass(frozen=True)
class _Relations:
    """The SQL relations a summary reads, as text inlined where each is read (temporary views
    cost two statements each, to create and to drop, ~1 ms apiece on a report's start-up):
    `scoped`, the scope's `trace_results` rows; `scored`, its case runs (`store.case_level`);
    `judgments` and `conversations`: whether the store holds any judge verdict, or any
    conversation a report shows (one of several turns, or a multi-turn case run).

    A scope none of whose traces is a turn of a multi-turn case has one case run per trace, so
    `scored` is then `scoped` itself: the case-level relation (windowed joins over `case_turns`
    and the conversations) costs each query that reads it ~15 ms even at 10k traces, for rows
    identical to the scope's (decision 601)."""

    scoped: str
    scored: str
    judgments: bool
    conversations: bool


def _relations(conn: duckdb.DuckDBPyConnection, scope: Scope) -> _Relations:
    any_turns, judgments, conversations = conn.execute(_HOLDS).fetchall()[0]
    scoped = scope.rows
    turns = bool(any_turns) and bool(conn.execute(_HAS_TURNS.format(scoped=scoped)).fetchall()[0][0])
    scored = f"({case_level(scoped)})" if turns else scoped
    return _Relations(scoped, scored, bool(judgments), bool(conversations or any_turns))


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
    `trace_verdicts` counts each judged trace (each turn its own), as JUnit lists them;
    `conversations`: verdict → the conversations a report shows (`store.conversation_report`).
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
    conversations: dict[str, int] = field(default_factory=dict)


# The case-level counts, one scan of `scored` (the case-level relation is a union of windowed
# joins: each query over it costs ~15 ms to plan and run even at 10k traces, and the summary asked
# five of them; decision 600). Grouping set 0 (dimension, verdict) gives the verdict counts and the
# failing count, 1 (verdict, failure_class) the failure classes, 2 (verdict, settled tier) where
# FAILs were settled; `GROUPING()` tells the sets apart (NULL is also a class and a dimension).
_CASE_COUNTS = """
SELECT CASE grouping(dimension, failure_class, settled) WHEN 3 THEN 0 WHEN 5 THEN 1 ELSE 2 END AS kind,
       dimension, verdict, failure_class, settled, count(*), verdict IN ('FAIL', 'AGENT_ERROR') AS failing
FROM (SELECT dimension, verdict, failure_class, settled_at::VARCHAR AS settled FROM {scored})
GROUP BY GROUPING SETS ((dimension, verdict), (verdict, failure_class), (verdict, settled))
HAVING grouping(dimension, failure_class, settled) = 3
    OR (verdict = 'FAIL' AND (grouping(dimension, failure_class, settled) = 5 OR settled IS NOT NULL))
"""
# The case ids (trace ids for traces with no case) of the FAILs of the `top` classes, in one scan.
_CLASS_CASES = """
SELECT failure_class, list(DISTINCT coalesce(case_id, trace_id) ORDER BY coalesce(case_id, trace_id))
FROM {scored} WHERE verdict = 'FAIL'
    AND (list_contains($classes::VARCHAR[], failure_class) OR ($with_null AND failure_class IS NULL))
GROUP BY 1
"""
# The per-trace tables (findings, rung_results) are joined with the scope one partition of its
# traces at a time (`{part}`: trace_id, verdict; `_PARTITION_TRACES` a partition): a join's
# hash table holds the partition's trace ids, so the summary's memory does not grow with the run
# (decision 350). Every figure below is additive over partitions of traces.
#
# The tools findings of FAIL traces name, by FAIL traces (`$known`: only these tool names; NULL:
# any). A finding without a tool (a rung-3 order problem) implicates none.
_TOOLS = """
SELECT f.tool, count(DISTINCT f.trace_id) FROM findings f
SEMI JOIN (SELECT trace_id FROM {part} WHERE verdict = 'FAIL') s USING (trace_id)
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
    FROM rung_results SEMI JOIN (SELECT trace_id FROM {part} WHERE verdict IN ('PASS', 'FAIL')) s
        USING (trace_id)
    WHERE scores IS NOT NULL
)
WHERE e.value IS NOT NULL
GROUP BY rung_name, e.key
"""
_LADDER = """
SELECT rung_name, min(rung), status, count(*) FROM rung_results SEMI JOIN {part} USING (trace_id)
GROUP BY rung_name, status
"""
# The trace-level counts, one scan of `scoped`: each verdict's traces (grouping set 1) and the
# verdicts each rung settled (set 0); with each verdict's least and greatest evaluator version and
# how many traces name one: when every trace names the same, that is the first result's, and the
# summary needs no top-N of the scope in report order to find it (~2 ms at 10k, 4 at 100k).
_TRACE_COUNTS = """
SELECT grouping(settled_by), settled_by, verdict, count(*),
       min(evaluator_version), max(evaluator_version), count(evaluator_version)
FROM {scoped}
GROUP BY GROUPING SETS ((settled_by, verdict), (verdict))
"""
_FIRST_VERSION = "SELECT evaluator_version FROM {scoped} ORDER BY case_id, repeat_index, trace_id LIMIT 1"
_PARTITION_TRACES = 100_000
# Partitions are joined under `run_report.READ_MEMORY` (`capped`): 100k traces fit in it.
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
FROM trace_judgments SEMI JOIN (SELECT trace_id FROM {scoped}) s USING (trace_id)
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
FROM {{scored}} s {WITH_TURN} WHERE s.verdict IN ('FAIL', 'AGENT_ERROR')
ORDER BY {REPORT_ORDER} LIMIT $limit
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
    with store.lock:
        conn = store.conn
        rel = _relations(conn, scope)

        def rows(sql: str, params: Any = None) -> list[tuple[Any, ...]]:
            return conn.execute(sql.format(scoped=rel.scoped, scored=rel.scored), params).fetchall()

        counts = _case_counts(rows(_CASE_COUNTS))
        classes = counts.classes
        ranked = [cls for cls, _ in sorted(classes, key=lambda kv: (-kv[1], str(kv[0])))[:top]]
        wanted = {"classes": [c for c in ranked if c is not None], "with_null": None in ranked}
        found = dict(rows(_CLASS_CASES, wanted)) if ranked else {}
        class_cases = {cls: list(found.get(cls) or []) for cls in ranked}
        tools, scores, ladder = _per_trace_figures(store, rel.scoped, len(scope), list(known_tools) or None)
        judged = rows(_JUDGMENTS)[0] if rel.judgments else (0,)
        names = ("survivors", "cache_hits", "errors", "over_budget", "no_answer", "judge_calls",
                 "input_tokens", "output_tokens", "priced", "cost_usd", "models")  # fmt: skip
        judgments = dict(zip(names, judged, strict=True)) if judged[0] else None
        failing = [
            dict(zip(_FAILING_COLUMNS, r, strict=True)) for r in rows(_FAILING, {"limit": failing_limit})
        ]
        settled: list[tuple[str, str, int]] = []
        trace_verdicts: dict[str, int] = {}
        versions: set[str] = set()  # the least and greatest version of each verdict's traces
        unnamed = 0  # traces that name no version
        for by_verdict, name, verdict, n, least, greatest, named in rows(_TRACE_COUNTS):
            if by_verdict:
                trace_verdicts[verdict] = int(n)
                versions.update(v for v in (least, greatest) if v is not None)
                unnamed += int(n) - int(named)
            elif name is not None:
                settled.append((name, verdict, int(n)))
        if not versions or (len(versions) == 1 and not unnamed):  # one answer, whichever is first
            version = versions.pop() if versions else None
        else:
            version = rows(_FIRST_VERSION)[0][0]
        conversations = conversation_counts(store, rel.scoped) if rel.conversations else {}
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
            evaluator_version=version,
            trace_verdicts=trace_verdicts,
            conversations=conversations,
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
    store: Store, scoped: str, size: int, known: list[str] | None
) -> tuple[list[tuple[str, int]], list[tuple[str, str, float]], list[tuple[str, int, str, int]]]:
    """(tools, scores, ladder) of `Aggregates`, summed over partitions of the scope's traces (by
    a hash of the trace id), each joined with `findings` / `rung_results` on its own."""
    return capped(store, lambda: _partitioned(store.conn, scoped, size, known))


def _partitioned(
    conn: duckdb.DuckDBPyConnection, scoped: str, size: int, known: list[str] | None
) -> tuple[list[tuple[str, int]], list[tuple[str, str, float]], list[tuple[str, int, str, int]]]:
    parts = max(1, -(-size // _PARTITION_TRACES))
    tools: dict[str, int] = {}
    scores: dict[tuple[str, str], list[Any]] = {}  # sum, count, rung, position
    ladder: dict[tuple[str, str], list[int]] = {}  # rung, traces
    for number in range(parts):
        part = f"(SELECT trace_id, verdict FROM {scoped}" + (
            f" WHERE hash(trace_id) % {parts} = {number})" if parts > 1 else ")"
        )
        for tool, n in conn.execute(_TOOLS.format(part=part), {"known": known}).fetchall():
            tools[tool] = tools.get(tool, 0) + int(n)
        for name, key, total, n, rung, pos in conn.execute(_SCORES.format(part=part)).fetchall():
            seen = scores.setdefault((name, key), [0.0, 0, rung, pos])
            seen[0] += total
            seen[1] += n
            seen[2], seen[3] = min(seen[2], rung), min(seen[3], pos)
        for name, rung, status, n in conn.execute(_LADDER.format(part=part)).fetchall():
            count = ladder.setdefault((name, status), [rung, 0])
            count[0], count[1] = min(count[0], rung), count[1] + int(n)
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
