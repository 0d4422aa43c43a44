"""`traceladder evaluate`: judge every trace in the store (or one run's)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from traceladder.cli.common import (
    add_db_option,
    add_domain_option,
    add_live_options,
    add_rungs_option,
    db_path,
    ladder_for,
    live_options,
    run_id_arg,
)
from traceladder.cli.judge_options import add_judge_options, judge_request, say_judged
from traceladder.cli.span_source_opt import add_source_options
from traceladder.errors import ExitCode
from traceladder.text import printable


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "evaluate",
        help="judge stored traces with the rung-ordered evaluators; replaces earlier results",
        description="Judge every trace in the store: a trace carrying traceladder.case.id (suite runs, "
        "imported traces) gets every rung; a trace without a case gets the rungs it has inputs for "
        "(rung 1 uses the tool definitions the trace captured, else --tools or --domain; invariants need "
        "--policy), the others are not_evaluated with the reason. "
        "Re-evaluating replaces earlier results.",
    )
    add_db_option(p)
    p.add_argument("--run", type=run_id_arg, metavar="RUN_ID", help="only this run (default: every trace)")
    add_domain_option(
        p,
        "domain for case-tagged traces that name none (default: retail), and the tool schemas for "
        "traces without a case (default: none — rung 1 not_evaluated)",
    )
    p.add_argument("--cases", type=Path, metavar="FILE", help="case suite JSONL (default: the domain's)")
    add_live_options(p)
    add_rungs_option(p)
    add_source_options(p)
    add_judge_options(p)
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from traceladder.workflows.evaluate import EvaluateRequest, evaluate

    request = EvaluateRequest(
        run_id=args.run, domain=args.domain, cases_path=args.cases, live=live_options(args),
        ladder=ladder_for(args), judge=judge_request(args), source=args.source, shards=args.shards,
        dask=args.dask, dask_timeout_s=args.dask_timeout,
    )  # fmt: skip
    result = evaluate(db_path(args), request)
    summary = result.summary
    counts = " ".join(f"{v}={n}" for v, n in sorted(summary.verdicts.items()))
    runs = ",".join(summary.runs) or "-"
    if result.source is not None:
        where = f" on {args.dask}" if args.dask else ""
        print(
            f"traceladder: evaluate: {printable(result.source)}: {result.shards} shards{where}",
            file=sys.stderr,
        )
        print(f"evaluated={summary.units} spans={result.spans} runs={runs} {counts}".rstrip())
        say_judged(summary)
        return ExitCode.OK
    say_judged(summary)
    for warning in result.warnings:
        print(f"traceladder: evaluate: {printable(warning)}", file=sys.stderr, flush=True)
    counts += f" conversations={summary.conversations}" if summary.conversations else ""
    print(f"evaluated={summary.units} runs={runs} {counts}".rstrip())
    return ExitCode.OK
