"""A consistency record over repeated runs (ConsistencyV1): distinct, complete runs of one
selection with identical inputs, their per-case agreement, flaky cases, pass^k and pass@k.

`consistency(db, ConsistencyRequest)` → `ConsistencyResult` is the `consistency` command's call."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from traceladder.errors import UserError
from traceladder.report.consistency import consistency
from traceladder.report.repeatability import NotRepeated, listed_twice, not_repeated
from traceladder.store.db import Store, open_store
from traceladder.store.runs import run_info, verdicts


@dataclass(frozen=True)
class ConsistencyRequest:
    """Two or more evaluated runs with the same inputs, each one trial per case."""

    run_ids: tuple[str, ...]


@dataclass(frozen=True)
class ConsistencyResult:
    """The ConsistencyV1 record."""

    record: dict[str, Any]


def consistency_of(db: Path, request: ConsistencyRequest) -> ConsistencyResult:
    """The `consistency` command's workflow: the record of the request's runs in the store at `db`
    (read only). `UserError` for fewer than two runs, a run named twice, or runs not repeated."""
    with open_store(db, read_only=True) as store:
        return ConsistencyResult(consistency_record(store, list(request.run_ids)))


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
