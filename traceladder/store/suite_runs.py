"""The runs of one suite: every run in the store whose case file has the same SHA-256
(`runs.input_hashes.cases`), with its verdict counts overall and per dimension — the numbers
each run's own report states, read in one query for all of them, never by building N reports.

A run's verdicts are its `trace_results` rows (what `run_rows`, and so the report, reads);
a run with no result yet is not listed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from traceladder.store.db import Store

# The latest runs first, limited; their verdicts per dimension, counted once.
_RUNS = """
WITH suite AS (
    SELECT run_id, model, started_at, status, input_hashes, selection, cases_total,
           count(*) OVER () AS runs_total
    FROM runs
    WHERE input_hashes->>'$.cases' = ? AND EXISTS (SELECT 1 FROM trace_results t WHERE t.run_id = runs.run_id)
    ORDER BY started_at DESC NULLS LAST, run_id DESC
    LIMIT ?
)
SELECT s.run_id, s.model, s.started_at, s.status, s.input_hashes, s.selection, s.cases_total, s.runs_total,
       t.dimension, t.verdict, count(*) AS n
FROM suite s JOIN trace_results t USING (run_id)
GROUP BY ALL
ORDER BY s.started_at NULLS FIRST, s.run_id, t.dimension NULLS FIRST, t.verdict
"""


@dataclass(frozen=True)
class SuiteRun:
    """One run of the suite: `verdict_counts` over all its judged traces, `dimensions` the same per
    dimension (traces with no dimension count only in the total)."""

    run_id: str
    model: str | None
    started_at: str | None  # ISO, UTC
    status: str | None
    input_hashes: dict[str, str]
    selection: Any
    cases_total: int | None
    verdict_counts: dict[str, int] = field(default_factory=dict)
    dimensions: dict[str, dict[str, int]] = field(default_factory=dict)


@dataclass(frozen=True)
class SuiteRuns:
    """The latest `limit` runs of the suite whose case file hashes to `cases_hash`, oldest first;
    `total` counts them all."""

    cases_hash: str
    runs: list[SuiteRun]
    total: int


def suite_runs(store: Store, cases_hash: str, *, limit: int = 50) -> SuiteRuns:
    found: dict[str, SuiteRun] = {}
    total = 0
    for (
        run_id,
        model,
        started,
        status,
        hashes,
        selection,
        cases_total,
        runs_total,
        dim,
        verdict,
        n,
    ) in store.fetchall(_RUNS, [cases_hash, limit]):
        total = int(runs_total)
        run = found.get(run_id)
        if run is None:
            run = found[run_id] = SuiteRun(
                run_id,
                model,
                started.isoformat() if started is not None else None,
                status,
                json.loads(hashes) if isinstance(hashes, str) else dict(hashes or {}),
                json.loads(selection) if isinstance(selection, str) else selection,
                cases_total,
            )
        run.verdict_counts[verdict] = run.verdict_counts.get(verdict, 0) + int(n)
        if dim is not None:
            counts = run.dimensions.setdefault(dim, {})
            counts[verdict] = counts.get(verdict, 0) + int(n)
    return SuiteRuns(cases_hash, list(found.values()), total)
