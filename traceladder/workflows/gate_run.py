"""The CI gate as a workflow: the run's complete evidence, the baseline, the decision.

`run_gate(db, GateRequest)` → `GateResult` is the command's one call: it opens the store, decides
(`gate`), writes the JUnit file and builds the pull-request comment when the request asks for them.
The command prints the result and writes the GitHub step files."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any

from traceladder.errors import UserError, VerificationFailed
from traceladder.report.documents import BaselineV1, ReportV1
from traceladder.report.gate import GateOutcome, decide
from traceladder.store.db import Store, open_store
from traceladder.store.readers import latest_run
from traceladder.store.report_summary import run_verdict_counts
from traceladder.store.runs import case_verdicts, run_info


@dataclass(frozen=True)
class GateRequest:
    """`run_id` None: the latest run. At least one of `min_pass_rate` and `baseline_path`;
    `max_drop`: the largest allowed drop below the baseline's pass rate; `junit`: also write the
    run as JUnit XML there; `comment`: also build the pull-request comment (needs a baseline)."""

    run_id: str | None = None
    min_pass_rate: float | None = None
    baseline_path: Path | None = None
    max_drop: float = 0.0
    allow_partial: bool = False
    junit: Path | None = None
    comment: bool = False


@dataclass(frozen=True)
class GateResult:
    run_id: str
    outcome: GateOutcome
    gaps: tuple[str, ...]  # incomplete evidence, gated anyway because of --allow-partial
    report: ReportV1 | None  # when a comment was asked for (a JUnit file streams its own)
    baseline: BaselineV1 | None = None  # the baseline read, when one was given
    comment: str | None = None  # the pull-request comment (markdown), when asked for


def run_gate(db: Path, request: GateRequest, stdout: IO[str]) -> GateResult:
    """The `gate` command's workflow: decide the request's run in the store at `db` (read only);
    write its JUnit file when asked (`stdout` receives what the format prints); build the comment.
    `UserError` for a comment without a baseline, and as `gate` raises."""
    if request.comment and not request.baseline_path:
        raise UserError("--comment shows the change from a baseline; give --baseline FILE too")
    with open_store(db, read_only=True) as store:
        result = gate(
            store, run_id=request.run_id, min_pass_rate=request.min_pass_rate,
            baseline_path=request.baseline_path, max_drop=request.max_drop,
            allow_partial=request.allow_partial, with_report=request.comment,
        )  # fmt: skip
        if request.junit is not None:
            # The report's builder loads only for --junit; its results stream into the file a batch
            # at a time, validated as every format is.
            from traceladder.workflows.report_files import open_report, stream_report

            opened = open_report(store, result.run_id)
            stream_report(opened, "junit", request.junit, stdout, what="JUnit file")
    if request.comment and result.report is not None and result.baseline is not None:
        from traceladder.report.pr_comment import pr_comment

        text = pr_comment(result.baseline, result.report, f"gate: {result.outcome.reason}")
        return replace(result, comment=text)
    return result


def gate(
    store: Store,
    *,
    run_id: str | None,
    min_pass_rate: float | None,
    baseline_path: Path | None,
    max_drop: float,
    allow_partial: bool = False,
    with_report: bool = False,
) -> GateResult:
    """Decide a run against a pass-rate floor and/or a baseline.

    Gating needs complete evidence: a complete, fully evaluated run that covers every case of the
    baseline — else `UserError` naming what is missing, unless `allow_partial`. A run that is not
    comparable with the baseline (another model, case hash or configuration) is reported as just
    that (exit 2), before any completeness question.
    """
    if min_pass_rate is None and baseline_path is None:
        raise UserError("give --min-pass-rate X and/or --baseline FILE")
    baseline = _read_baseline(baseline_path) if baseline_path else None
    run_id = run_id or latest_run(store)
    info = run_info(store, run_id)
    # The pass rate counts every judged trace of the run, as the report does (one definition:
    # store.report_summary.run_verdict_counts); the per-case verdicts only name regressions.
    counts = run_verdict_counts(store, run_id)
    cases = case_verdicts(store, run_id) if baseline is not None else []
    incomparable = _comparability(baseline, info.model, info.input_hashes, info.config) if baseline else None
    gaps = [info.incompleteness()] if info.incompleteness() else []
    if baseline is not None and not incomparable:
        covered = {case_id for case_id, _ in cases}
        missing = sorted(set(baseline["cases"]) - covered)
        if missing:
            shown = ", ".join(missing[:5]) + (" …" if len(missing) > 5 else "")
            gaps.append(f"run {run_id} does not cover {len(missing)} of the baseline's cases ({shown})")
    if gaps and not incomparable and not allow_partial:
        raise UserError(f"not gated: {'; '.join(gaps)} (or pass --allow-partial)")
    outcome = decide(
        run_id, counts, cases, min_pass_rate=min_pass_rate, baseline=baseline, max_drop=max_drop,
        incomparable=incomparable,
    )  # fmt: skip
    report = _report(store, run_id) if with_report else None
    return GateResult(run_id, outcome, tuple(gaps) if not incomparable else (), report, baseline)


# The baseline's reader and the report's (the domain, the case model) load only when asked for:
# `gate --min-pass-rate` in CI pays for neither on every build.


def _read_baseline(path: Path) -> BaselineV1:
    from traceladder.workflows.baseline_files import load_baseline

    try:
        return load_baseline(path)
    except VerificationFailed as exc:  # for the gate, an edited baseline is an unusable input
        raise UserError(str(exc)) from None


def _comparability(
    baseline: BaselineV1, model: str, input_hashes: dict[str, str], config: dict[str, Any]
) -> list[str]:
    from traceladder.report.baseline import comparability

    return comparability(baseline, model, input_hashes, config)


def _report(store: Store, run_id: str) -> ReportV1:
    from traceladder.workflows.report_files import load_report

    return load_report(store, run_id)
