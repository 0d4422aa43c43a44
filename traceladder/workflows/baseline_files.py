"""BaselineV1 workflows: the review template, locking (with its evidence checked), showing and
checking a baseline. Every failure is typed: `UserError` (exit 2) for what a user must fix,
`VerificationFailed` (exit 1) for a hash that does not verify.

The commands' calls: `lock_baseline(db, LockRequest)` → `LockResult` (`baseline lock`) and
`check_baseline(db, CheckRequest)` → `BaselineCheck` (`baseline check`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from traceladder.errors import UserError, VerificationFailed
from traceladder.evaluate.rungs.types import VerdictValue
from traceladder.files import read_json_object, write_text
from traceladder.report.baseline import (
    LockRefused,
    build_baseline,
    check_lock_runs,
    check_review,
    comparability,
    report_sha256,
    review_template,
    verify_self_hash,
)
from traceladder.report.documents import BaselineV1
from traceladder.schemas import first_problem, require_valid
from traceladder.store.db import Store, open_store
from traceladder.store.runs import failures_of, has_results, run_info
from traceladder.workflows.consistency_record import consistency_record
from traceladder.workflows.report_files import load_report


def load_baseline(path: Path) -> BaselineV1:
    """A BaselineV1 that parses, validates against its published schema and verifies its own
    hash; `UserError` otherwise, `VerificationFailed` for a file edited after locking."""
    baseline = read_json_object(path, "baseline")
    if baseline.get("schema") != "BaselineV1":
        raise UserError(f"{path} is not a BaselineV1 file (schema={baseline.get('schema')!r})")
    problem = first_problem("BaselineV1", baseline)
    if problem:
        raise UserError(f"baseline {path} is not a valid BaselineV1: {problem}")
    if not verify_self_hash(baseline):
        raise VerificationFailed(
            f"baseline {path} fails its own SHA-256: it was edited after locking; re-lock it"
        )
    return cast(BaselineV1, baseline)  # validated against its schema above


def make_review_template(store: Store, run_id: str) -> dict[str, Any]:
    run_info(store, run_id)  # a clear error for an unknown run
    return review_template(run_id, failures_of(store, run_id))


def lock(store: Store, canonical: str, consistency_path: Path, review_path: Path) -> BaselineV1:
    """The BaselineV1 for `canonical`, or `UserError` naming the evidence that is missing. The
    baseline validates against its published schema before anyone can write it (`SchemaViolation`,
    a bug, otherwise)."""
    consistency = read_json_object(consistency_path, "consistency")
    review = read_json_object(review_path, "review")
    runs = consistency.get("runs")
    if not isinstance(runs, list) or canonical not in runs:
        raise UserError(f"the canonical run {canonical} is not among the consistency record's runs")
    try:
        check_lock_runs([run_info(store, r) for r in runs])
    except LockRefused as exc:
        raise UserError(f"baseline not locked: {exc}") from None
    fresh = consistency_record(store, list(runs))
    if fresh["per_case"] != consistency.get("per_case"):
        raise UserError(
            f"{consistency_path} does not match the stored results; "
            "re-create it with `traceladder consistency`"
        )
    report = load_report(store, canonical)
    fails = {
        (r["case_id"], r["repeat_index"]) for r in report["results"] if r["verdict"] == VerdictValue.FAIL
    }
    try:
        counts = check_review(review, canonical, fails)
    except LockRefused as exc:
        raise UserError(f"baseline not locked: {exc}") from None
    baseline = build_baseline(report["run"], report, consistency, counts)
    require_valid("BaselineV1", json.loads(json.dumps(baseline)))  # checked exactly as it is written
    return baseline


@dataclass(frozen=True)
class LockRequest:
    """Lock the report of run `canonical` with its ConsistencyV1 record and ReviewV1 file, and
    write the baseline to `output`."""

    canonical: str
    consistency: Path
    review: Path
    output: Path


@dataclass(frozen=True)
class LockResult:
    """The BaselineV1 written to `path`."""

    baseline: BaselineV1
    path: Path


def lock_baseline(db: Path, request: LockRequest) -> LockResult:
    """The `baseline lock` workflow: `lock` on the store at `db` (read only), written atomically
    (sorted keys: the file is hashed as written)."""
    with open_store(db, read_only=True) as store:
        baseline = lock(store, request.canonical, request.consistency, request.review)
    text = json.dumps(baseline, indent=2, ensure_ascii=False, sort_keys=True) + "\n"
    write_text(request.output, text, "baseline")
    return LockResult(baseline, request.output)


@dataclass(frozen=True)
class CheckRequest:
    """Verify the baseline `file`; `run_id`: also check that run's comparability with it."""

    file: Path
    run_id: str | None = None


def check_baseline(db: Path, request: CheckRequest) -> BaselineCheck:
    """The `baseline check` workflow: `check` against the store at `db` when there is one (read
    only; its canonical report is verified when the store has it), else the file alone."""
    if not db.exists():
        return check(None, request.file, request.run_id)
    with open_store(db, read_only=True) as store:
        return check(store, request.file, request.run_id)


@dataclass(frozen=True)
class BaselineCheck:
    messages: tuple[str, ...]  # what verified, in order


def check(store: Store | None, path: Path, run_id: str | None) -> BaselineCheck:
    """Verify a baseline's own hash; its canonical report, when `store` holds that run; and the
    comparability of `run_id`, when given. `VerificationFailed` (exit 1) for a hash that does not
    verify; `UserError` (exit 2) for a run that is not comparable."""
    baseline = load_baseline(path)
    said = [f"baseline_sha256 verified ({baseline['baseline_sha256'][:12]}…)"]
    if store is None:
        if run_id:
            raise UserError(f"no store to find run {run_id} in; pass --db")
        return BaselineCheck(tuple(said))
    if has_results(store, baseline["run_id"]):
        if report_sha256(load_report(store, baseline["run_id"])) != baseline["report_sha256"]:
            raise VerificationFailed(
                f"the canonical run's report in {store.path} no longer hashes to report_sha256"
            )
        said.append("report_sha256 verified against the canonical run in the store")
    if run_id:
        info = run_info(store, run_id)
        differences = comparability(baseline, info.model, info.input_hashes, info.config)
        if differences:
            raise UserError(f"run {info.run_id} is not comparable: different {', '.join(differences)}")
        said.append(f"run {info.run_id} is comparable with the baseline")
    return BaselineCheck(tuple(said))
