"""`baseline init`: everything a baseline needs before a person's review, in one command — N runs
with identical inputs (each evaluated), their consistency record and the review template of the
canonical (first) run — and the one line saying what to review and how to lock afterwards.

`init_baseline(db, InitRequest, progress_for=…, on_run=…)` → `InitResult`. Each run is what `run`
with the same flags would run: the built-in loop against a model (prepared once, so a bad flag
fails before any run; sim:faulty run i uses seed SEED + i), or the team's agent under test when
the request names one. The review itself cannot be automated: a person decides whether each FAIL
is the model's fault, the judge's or the golden answer's. Everything around it is.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from traceladder.errors import UserError
from traceladder.files import write_text
from traceladder.report.baseline import MAX_RUNS, MIN_RUNS, REVIEW_CLASSES
from traceladder.store.db import Store, open_store
from traceladder.workflows.agent_run import run_agent
from traceladder.workflows.baseline_files import make_review_template
from traceladder.workflows.consistency_record import consistency_record
from traceladder.workflows.run import baseline_run, prepare_run
from traceladder.workflows.run_request import (
    ProgressFor,
    RunRequest,
    RunResult,
    no_progress,
    require_complete,
)

# told after each run: its index and what it did (the CLI says it is evaluated, and what the judge did)
RunDone = Callable[[int, RunResult], None]
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
class InitRequest:
    """`baseline init`: `runs` runs of what `run` asks (no --repeat, --resume or --no-report: each
    run is new, complete and evaluated), their record and review in `folder`."""

    run: RunRequest
    runs: int = MIN_RUNS
    folder: Path = Path("eval")


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
    db: Path, request: InitRequest, *, progress_for: ProgressFor = no_progress, on_run: RunDone | None = None
) -> InitResult:
    """Refuse what would be overwritten before the store is opened, run and evaluate `request.runs`
    complete runs into the store at `db` (`on_run(i, result)` after each), then write the
    consistency record and the canonical (first) run's review template. `UserError` for a run
    that did not complete or measured nothing, or (from `consistency_record`) when the runs are
    not repetitions of one configuration."""
    paths = InitPaths.under(request.folder)
    check_runs(request.runs)
    check_paths(paths)  # before the first run: a refusal must not cost N runs
    with open_store(db) as store:
        execute = _runs(store, request.run, progress_for)
        ids = []
        for i in range(request.runs):
            result = execute(i)
            if on_run is not None:
                on_run(i, result)
            ids.append(result.summary.run_id)
        record = consistency_record(store, ids)
        write_text(
            paths.consistency, json.dumps(record, indent=2, ensure_ascii=False) + "\n", "consistency record"
        )
        template = make_review_template(store, ids[0])
    write_text(paths.review, json.dumps(template, indent=2, ensure_ascii=False) + "\n", "review")
    fails = len(template["reviews"])
    return InitResult(tuple(ids), paths, fails, next_step(db, ids[0], paths, fails))


def _runs(store: Store, request: RunRequest, progress_for: ProgressFor) -> Callable[[int], RunResult]:
    """Run i of the baseline, its set-up resolved once (a bad flag fails before any run)."""
    if not request.names_an_agent:
        prepared = prepare_run(store, request)
        return lambda i: baseline_run(store, prepared, i, progress_for=progress_for)

    def agent_run(i: int) -> RunResult:
        result = run_agent(store, request, progress_for=progress_for)
        summary = result.summary
        require_complete(summary)
        if summary.finished and summary.agent_errors == summary.finished:
            raise UserError(
                f"every case of run {summary.run_id} ended as AGENT_ERROR, so nothing was measured; see "
                f"`traceladder report {summary.run_id}`"
            )
        return result

    return agent_run
