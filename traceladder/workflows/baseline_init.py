"""`baseline init`: everything a baseline needs before a person's review, in one command — N runs
with identical inputs (each evaluated), their consistency record and the review template of the
canonical (first) run — and the one line saying what to review and how to lock afterwards.

The review itself cannot be automated: a person decides whether each FAIL is the model's fault,
the judge's or the golden answer's. Everything around it is.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from traceladder.errors import UserError
from traceladder.files import write_text
from traceladder.report.baseline import MIN_RUNS, REVIEW_CLASSES
from traceladder.store.db import Store
from traceladder.workflows.baseline_files import make_review_template
from traceladder.workflows.consistency_record import consistency_record

MAX_RUNS = 20
CONSISTENCY_FILE, REVIEW_FILE, BASELINE_FILE = "consistency.json", "review.json", "baseline.json"


@dataclass(frozen=True)
class InitPaths:
    consistency: Path
    review: Path
    baseline: Path

    @staticmethod
    def under(folder: Path) -> InitPaths:
        return InitPaths(folder / CONSISTENCY_FILE, folder / REVIEW_FILE, folder / BASELINE_FILE)


@dataclass(frozen=True)
class InitResult:
    run_ids: tuple[str, ...]
    paths: InitPaths
    fails: int
    next_step: str  # the one line: what to review, then the exact lock command


def check_runs(runs: int) -> None:
    if not MIN_RUNS <= runs <= MAX_RUNS:
        raise UserError(f"--runs {runs}: a baseline is locked from {MIN_RUNS} to {MAX_RUNS} runs")


def check_paths(paths: InitPaths) -> None:
    """Refused before any run: a review file may hold a person's classifications, and a baseline a
    committed lock — neither is overwritten by a new init."""
    for path in (paths.review, paths.baseline):
        if path.exists():
            raise UserError(f"{path} already exists; move it away or pass another --dir")


def next_step(db: Path, canonical: str, paths: InitPaths, fails: int) -> str:
    lock = shlex.join(
        [
            "traceladder", "baseline", "lock", "--db", str(db), "--canonical", canonical,
            "--consistency", str(paths.consistency), "--review", str(paths.review),
            "--output", str(paths.baseline),
        ]
    )  # fmt: skip
    if not fails:
        return f"next: nothing to review (run {canonical} has no FAIL); lock it: {lock}"
    return (
        f'next: in {paths.review}, set "classification" of each of the {fails} FAIL(s) of run '
        f"{canonical} to {', '.join(REVIEW_CLASSES)} (judge and golden errors must be 0), then: {lock}"
    )


def init_baseline(
    store: Store, *, run: Callable[[int], str], runs: int, paths: InitPaths, db: Path
) -> InitResult:
    """Run `run(i)` for i in 0..runs-1 (each runs and evaluates one complete run, returning its
    id), then write the consistency record and the canonical run's review template. `UserError`
    (from `consistency_record`) when the runs are not repetitions of one configuration."""
    check_runs(runs)
    check_paths(paths)
    ids = [run(i) for i in range(runs)]
    record = consistency_record(store, ids)
    write_text(
        paths.consistency, json.dumps(record, indent=2, ensure_ascii=False) + "\n", "consistency record"
    )
    template = make_review_template(store, ids[0])
    write_text(paths.review, json.dumps(template, indent=2, ensure_ascii=False) + "\n", "review")
    fails = len(template["reviews"])
    return InitResult(tuple(ids), paths, fails, next_step(db, ids[0], paths, fails))
