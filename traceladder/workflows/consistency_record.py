"""A consistency record over repeated runs (ConsistencyV1): distinct, complete runs of one
selection with identical inputs, their per-case agreement, flaky cases, pass^k and pass@k."""

from __future__ import annotations

from typing import Any

from traceladder.errors import UserError
from traceladder.reporting.consistency import consistency
from traceladder.reporting.repeatability import NotRepeated, listed_twice, not_repeated
from traceladder.storage.db import Store
from traceladder.storage.runs import run_info, verdicts


def consistency_record(store: Store, run_ids: list[str]) -> dict[str, Any]:
    if len(run_ids) < 2:
        raise UserError("consistency needs at least two runs")
    twice = listed_twice(run_ids)
    if twice:
        raise UserError(f"run {twice} is listed more than once; each run is one trial")
    infos = [run_info(store, r) for r in run_ids]
    first = infos[0]
    problem = not_repeated(infos)
    if problem is not None:
        raise UserError(_not_comparable(problem))
    trials: dict[str, list[str]] = {}
    for run_id in run_ids:
        for (case_id, _), (verdict, _) in sorted(verdicts(store, run_id).items()):
            trials.setdefault(case_id, []).append(verdict)
    return {
        "schema": "ConsistencyV1",
        "runs": run_ids,
        "model": first.model,
        "input_hashes": first.input_hashes,
        "complete": all(i.complete for i in infos),
        **consistency(trials),
    }


def _not_comparable(problem: NotRepeated) -> str:
    if problem.kind == "incomplete":
        return f"not comparable: {problem.incompleteness}"
    if problem.kind == "selection":
        return (
            f"runs {problem.first} and {problem.other} ran different selections of cases; compare runs "
            "of the same selection"
        )
    differing = ", ".join(problem.differing)
    return f"runs {problem.first} and {problem.other} are not comparable: different {differing}"
