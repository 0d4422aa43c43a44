"""`traceladder selfcheck --judge`: the request from the flags, and the measurement printed."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from traceladder.cli.common import domain_name
from traceladder.errors import ExitCode
from traceladder.text import printable

if TYPE_CHECKING:
    from traceladder.workflows.judge_selfcheck import JudgeSelfcheckRequest, JudgeSelfcheckResult


def judge_request(args: argparse.Namespace) -> JudgeSelfcheckRequest:
    """The `--judge` flags as the workflow's request."""
    from traceladder.workflows.judge_selfcheck import JudgeSelfcheckRequest  # the OpenAI library

    return JudgeSelfcheckRequest(
        domain=domain_name(args), model=args.judge_model, base_url=args.judge_base_url,
        rubric=args.judge_rubric, meta=args.meta, rounds=args.rounds, min_kappa=args.min_kappa,
        max_drift=args.max_drift,
    )  # fmt: skip


def print_judge_selfcheck(result: JudgeSelfcheckResult) -> int:
    """Print the judge's measurement; the exit code (1 when a criterion missed a threshold)."""
    report = result.report
    simulated = (
        " (the simulated judge: fixed heuristics, not a model)" if report.model.startswith("sim:") else ""
    )
    print(
        f"judge selfcheck: {report.model}{simulated}: "
        f"{report.items} labelled trajectories × {report.rounds} rounds"
    )
    for s in report.criteria:
        kappa = "undefined" if s.kappa is None else f"{s.kappa:.3f}"
        confusion = " ".join(f"{label}→{verdict}={n}" for (label, verdict), n in sorted(s.confusion.items()))
        print(
            f"{s.criterion}: accuracy={s.accuracy:.3f} ({s.agreed}/{s.items}) kappa={kappa} "
            f"drift={s.drift:.3f} ({s.flipped}/{s.items} flipped over {s.rounds} rounds) "
            f"confusion: {confusion}"
        )
    for item, criterion, label, verdict in report.disagreements:
        print(printable(f"DISAGREE {item} {criterion}: label={label} judge={verdict}"))
    print(f"judge_errors={report.errors}")
    return ExitCode.CHECK_FAILED if result.low else ExitCode.OK
