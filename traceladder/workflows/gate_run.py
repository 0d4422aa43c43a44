"""The CI gate as a workflow: the run's complete evidence, the baseline, the decision."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from traceladder.errors import UserError, VerificationFailed
from traceladder.reporting.documents import BaselineV1, ReportV1
from traceladder.reporting.gate import GateOutcome, decide
from traceladder.storage.db import Store
from traceladder.storage.readers import latest_run
from traceladder.storage.run_report import run_verdict_counts
from traceladder.storage.runs import case_verdicts, run_info


@dataclass(frozen=True)
class GateResult:
    run_id: str
    outcome: GateOutcome
    gaps: tuple[str, ...]  # incomplete evidence, gated anyway because of --allow-partial
    report: ReportV1 | None  # when a comment was asked for (a JUnit file streams its own)
    baseline: BaselineV1 | None = None  # the baseline read, when one was given


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
    # storage.run_report.run_verdict_counts); the per-case verdicts only name regressions.
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
    from traceladder.reporting.baseline import comparability

    return comparability(baseline, model, input_hashes, config)


def _report(store: Store, run_id: str) -> ReportV1:
    from traceladder.workflows.report_files import load_report

    return load_report(store, run_id)
