"""Placeholder until the evaluator lands: prints where the run is."""

from __future__ import annotations

from pathlib import Path

from traceladder.storage.db import Store


def evaluate_and_report(store: Store, run_id: str, cases: Path | None, db: Path) -> None:
    rows = store.fetchall(
        "SELECT agent_status, count(*) FROM case_runs WHERE run_id = ? GROUP BY 1 ORDER BY 1",
        [run_id],
    )
    print("case_runs: " + ", ".join(f"{s}={n}" for s, n in rows))
