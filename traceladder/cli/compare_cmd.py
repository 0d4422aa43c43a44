"""`traceladder compare RUN_A RUN_B`: model A against model B on the same suite, with McNemar's
exact test; exit 1 when B is significantly worse."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from traceladder.cli.common import add_db_option, db_path
from traceladder.errors import ExitCode
from traceladder.files import write_text
from traceladder.report.comparison_text import render_comparison
from traceladder.workflows.compare_runs import CompareRequest, compare, run_group

DEFAULT_ALPHA = 0.05


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "compare",
        help="compare two runs of one suite (two models, prompts or configurations): flips, deltas, "
        "McNemar's exact test",
        description="A is the reference, B the candidate. Per case the paired outcome is PASS when all "
        "of its first k scored trials passed (k: the smaller trial count of the two sides; SKIP and "
        "NOT_EVALUATED are not trials, AGENT_ERROR is a trial that did not pass), and McNemar's exact "
        "test (two-sided binomial on the discordant cases b and c) decides whether B differs. A side "
        "can be several runs of one model, comma-separated (RUN1,RUN2,RUN3). Exit codes: 0 B is not "
        "significantly worse; 1 B is significantly worse (p < --alpha and more regressions than "
        "improvements); 2 the runs are not comparable (different case hash or domain), unknown, "
        "incomplete, or the command was used wrongly.",
    )
    add_db_option(p)
    p.add_argument("run_a", type=_group, metavar="RUN_A", help="the reference run (or RUN1,RUN2,…)")
    p.add_argument("run_b", type=_group, metavar="RUN_B", help="the candidate run (or RUN1,RUN2,…)")
    p.add_argument(
        "--alpha",
        type=_alpha,
        default=DEFAULT_ALPHA,
        metavar="A",
        help=f"significance level of the test, in (0, 1) (default {DEFAULT_ALPHA})",
    )
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--output", type=Path, metavar="FILE", help="also write the comparison as JSON")
    p.set_defaults(handler=handle)


def _group(text: str) -> tuple[str, ...]:
    try:
        return run_group(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _alpha(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number like 0.05") from None
    if not math.isfinite(value) or not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"{text!r} must be between 0 and 1, exclusive (e.g. 0.05)")
    return value


def handle(args: argparse.Namespace) -> int:
    result = compare(db_path(args), CompareRequest(args.run_a, args.run_b, alpha=args.alpha))
    text = json.dumps(result.comparison, indent=2, ensure_ascii=False) + "\n"
    if args.output:
        write_text(args.output, text, "comparison")
    sys.stdout.write(text if args.format == "json" else render_comparison(result.comparison))
    if args.output and args.format == "text":
        print(f"comparison_path={args.output}")
    return ExitCode.CHECK_FAILED if result.b_worse else ExitCode.OK
