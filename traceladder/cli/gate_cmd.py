"""`traceladder gate`: fail CI when the pass rate is too low or drops against a baseline."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from traceladder.cli.common import add_db_option, db_path, run_id_arg
from traceladder.domain.retail import load_retail_domain
from traceladder.errors import UserError, VerificationFailed
from traceladder.evaluators.baseline import comparability, verify_self_hash
from traceladder.evaluators.gate import decide, markdown_summary
from traceladder.evaluators.render import render_junit
from traceladder.files import append_text, read_json_object, write_text
from traceladder.schemas import first_problem
from traceladder.storage.db import Store
from traceladder.storage.reports import latest_run, load_report
from traceladder.storage.runs import run_info, verdicts


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "gate",
        help="exit 1 when a run's pass rate is below a floor or dropped against a baseline",
        description="Exit codes: 0 the gate passed; 1 it failed (the reason names the numbers and the "
        "regressed cases); 2 the run is not comparable with the baseline (different case hash, model "
        "or configuration) or the command was used wrongly. Appends a markdown summary to "
        "$GITHUB_STEP_SUMMARY when that is set.",
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


def load_baseline(path: Path) -> dict[str, Any]:
    """A BaselineV1 that parses, validates against its published schema and verifies its own
    hash; `UserError` (exit 2) otherwise, `VerificationFailed` (exit 1) for an edited file."""
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
    return baseline


def handle(args: argparse.Namespace) -> int:
    if args.min_pass_rate is None and args.baseline is None:
        raise UserError("give --min-pass-rate X and/or --baseline FILE")
    try:
        baseline = load_baseline(args.baseline) if args.baseline else None
    except VerificationFailed as exc:  # for the gate, an edited baseline is an unusable input
        raise UserError(str(exc)) from None
    with Store(db_path(args), read_only=True) as store:
        run_id = args.run or latest_run(store)
        info = run_info(store, run_id)
        run_verdicts = verdicts(store, run_id)
        report = load_report(store, run_id, load_retail_domain().tool_names) if args.junit else None
    incomparable = comparability(baseline, info.model, info.input_hashes) if baseline else None
    gaps = [info.incompleteness()] if info.incompleteness() else []
    if baseline is not None and not incomparable:  # a run of another model is reported as just that
        covered = {case_id for case_id, _ in run_verdicts}
        missing = sorted(set(baseline["cases"]) - covered)
        if missing:
            shown = ", ".join(missing[:5]) + (" …" if len(missing) > 5 else "")
            gaps.append(f"run {run_id} does not cover {len(missing)} of the baseline's cases ({shown})")
    if gaps and not incomparable and not args.allow_partial:
        raise UserError(f"not gated: {'; '.join(gaps)} (or pass --allow-partial)")
    for gap in gaps:
        print(f"traceladder: WARNING: --allow-partial: gating incomplete evidence: {gap}", file=sys.stderr)
    outcome = decide(
        run_id, run_verdicts, min_pass_rate=args.min_pass_rate, baseline=baseline, max_drop=args.max_drop,
        incomparable=incomparable,
    )  # fmt: skip
    if report is not None:
        write_text(args.junit, render_junit(report), "JUnit file")
    summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary_file:
        warning = "".join(f"> **Warning**: partial evidence: {gap}\n\n" for gap in gaps)
        append_text(Path(summary_file), warning + markdown_summary(outcome, run_id), "$GITHUB_STEP_SUMMARY")
    stream = sys.stdout if outcome.exit_code == 0 else sys.stderr
    print(f"traceladder: {outcome.reason}", file=stream)
    return outcome.exit_code
