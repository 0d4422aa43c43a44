"""Reading runs and their verdicts for the workflow commands (consistency, baseline, gate)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from traceladder.errors import UserError
from traceladder.storage.db import Store


@dataclass(frozen=True)
class RunInfo:
    run_id: str
    model: str
    provider: str | None
    base_url_host: str | None
    config: dict[str, Any]
    input_hashes: dict[str, str]
    status: str
    cases_total: int
    started_at: str | None
    selection: dict[str, Any]
    finished: int  # case runs recorded
    evaluated: int  # case runs with a result

    @property
    def complete(self) -> bool:
        """Every selected case ran and was judged: the only evidence a gate or baseline accepts."""
        return self.status == "complete" and self.finished == self.cases_total == self.evaluated

    def incompleteness(self) -> str:
        """Why the run is not complete, in words (empty when it is)."""
        if self.status != "complete" or self.finished < self.cases_total:
            return (
                f"run {self.run_id} is {self.status} with {self.finished} of {self.cases_total} case runs; "
                f"finish it with `traceladder run --resume {self.run_id}`"
            )
        if self.evaluated < self.finished:
            return (
                f"run {self.run_id} has results for {self.evaluated} of {self.finished} case runs; "
                f"run `traceladder evaluate --run {self.run_id}`"
            )
        return ""


def run_info(store: Store, run_id: str) -> RunInfo:
    rows = store.fetchall(
        "SELECT run_id, model, provider, base_url_host, config, input_hashes, status, cases_total,"
        " started_at, selection,"
        " (SELECT count(*) FROM case_runs c WHERE c.run_id = r.run_id),"
        " (SELECT count(*) FROM results x WHERE x.run_id = r.run_id)"
        " FROM runs r WHERE run_id = ?",
        [run_id],
    )
    if not rows:
        raise UserError(
            f"no run {run_id} in {store.path}; list runs with `traceladder sql 'SELECT * FROM runs'`"
        )
    r = rows[0]
    return RunInfo(
        r[0], r[1], r[2], r[3], json.loads(r[4] or "{}"), json.loads(r[5] or "{}"), r[6], r[7] or 0,
        r[8].isoformat() if r[8] else None, json.loads(r[9] or "{}"), r[10], r[11],
    )  # fmt: skip


def verdicts(store: Store, run_id: str) -> dict[tuple[str, int], tuple[str, str | None]]:
    """(case id, repeat) → (verdict, failure class) for an evaluated run."""
    rows = store.fetchall(
        "SELECT case_id, repeat_index, verdict, failure_class FROM results WHERE run_id = ?", [run_id]
    )
    if not rows:
        raise UserError(f"run {run_id} has no results; run `traceladder evaluate --run {run_id}` first")
    return {(c, k): (v, f) for c, k, v, f in rows}
