"""`traceladder gate`: fail CI when the pass rate is too low or drops against a baseline."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from traceladder.cli.common import add_db_option, db_path, run_id_arg
from traceladder.errors import ExitCode
from traceladder.files import append_text, write_text
from traceladder.report.gate import markdown_summary, step_outputs
from traceladder.workflows.gate_run import GateRequest, run_gate


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "gate",
        help="exit 1 when a run's pass rate is below a floor or dropped against a baseline",
        description="Exit codes: 0 the gate passed; 1 it failed (the reason names the numbers and the "
        "regressed cases); 2 the run is not comparable with the baseline (different case hash, model "
        "or configuration) or the command was used wrongly. Appends a markdown summary to "
        "$GITHUB_STEP_SUMMARY and the step outputs run_id, pass_rate and gate (passed, failed, "
        "not_comparable) to $GITHUB_OUTPUT when those are set.",
    )
    add_db_option(p)
    p.add_argument("--run", type=run_id_arg, metavar="RUN_ID", help="run to gate (default: the latest)")
    p.add_argument("--min-pass-rate", type=_rate, metavar="X", help="minimum pass rate: 0.9 or 90%%")
    p.add_argument("--baseline", type=Path, metavar="FILE", help="BaselineV1 file to compare with")
    p.add_argument(
        "--max-drop",
        type=_rate,
        default=0.0,
        metavar="Y",
        help="largest allowed drop below the baseline's pass rate: 0.05 or 5%% (default 0)",
    )
    p.add_argument("--junit", type=Path, metavar="FILE", help="also write the run as JUnit XML")
    p.add_argument(
        "--comment",
        type=Path,
        metavar="FILE",
        help="with --baseline: also write a pull-request comment (markdown: before/after pass rates per "
        "dimension, the flipped cases) to FILE and to $GITHUB_STEP_SUMMARY",
    )
    p.add_argument(
        "--allow-partial",
        action="store_true",
        help="gate an incomplete run, or one that does not cover the baseline's cases (warns loudly)",
    )
    p.set_defaults(handler=handle)


def _rate(text: str) -> float:
    try:
        value = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a rate like 0.9 or 90%") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text!r} is outside 0..1 (use 0.9 or 90%)")
    return value


def handle(args: argparse.Namespace) -> int:
    request = GateRequest(
        run_id=args.run, min_pass_rate=args.min_pass_rate, baseline_path=args.baseline,
        max_drop=args.max_drop, allow_partial=args.allow_partial, junit=args.junit,
        comment=args.comment is not None,
    )  # fmt: skip
    result = run_gate(db_path(args), request, sys.stdout)
    for gap in result.gaps:
        print(f"traceladder: WARNING: --allow-partial: gating incomplete evidence: {gap}", file=sys.stderr)
    if args.comment and result.comment is not None:
        write_text(args.comment, result.comment, "comment file")
    output_file = os.environ.get("GITHUB_OUTPUT")
    if output_file:
        append_text(Path(output_file), step_outputs(result.outcome, result.run_id), "$GITHUB_OUTPUT")
    summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary_file:
        warning = "".join(f"> **Warning**: partial evidence: {gap}\n\n" for gap in result.gaps)
        comment = f"\n{result.comment}" if result.comment else ""
        text = warning + markdown_summary(result.outcome, result.run_id) + comment
        append_text(Path(summary_file), text, "$GITHUB_STEP_SUMMARY")
    stream = sys.stdout if result.outcome.exit_code == ExitCode.OK else sys.stderr
    print(f"traceladder: {result.outcome.reason}", file=stream)
    return result.outcome.exit_code
