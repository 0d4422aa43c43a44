"""A consistency record over repeated runs (ConsistencyV1): distinct, complete runs of one
selection with identical inputs, their per-case agreement, flaky cases, pass^k and pass@k."""

from __future__ import annotations

from typing import Any

from traceladder.errors import UserError
from traceladder.reporting.consistency import consistency
from traceladder.storage.db import Store
from traceladder.storage.runs import run_info, verdicts


def consistency_record(store: Store, run_ids: list[str]) -> dict[str, Any]:
    if len(run_ids) < 2:
        raise UserError("consistency needs at least two runs")
    repeated = sorted({r for r in run_ids if run_ids.count(r) > 1})
    if repeated:
        raise UserError(f"run {repeated[0]} is listed more than once; each run is one trial")
    infos = [run_info(store, r) for r in run_ids]
    first = infos[0]
    for info in infos:
        if not info.complete:
            raise UserError(f"not comparable: {info.incompleteness()}")
        if info.selection != first.selection:
            raise UserError(
                f"runs {first.run_id} and {info.run_id} ran different selections of cases; compare runs "
                "of the same selection"
            )
    for info in infos[1:]:
        differing = sorted(
            k for k in first.input_hashes if first.input_hashes.get(k) != info.input_hashes.get(k)
        )
        if info.model != first.model:
            differing.insert(0, "model")
        if differing:
            raise UserError(
                f"runs {first.run_id} and {info.run_id} are not comparable: different {', '.join(differing)}"
            )
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
