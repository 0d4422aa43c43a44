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
from traceladder.cli.judge_options import add_judge_options, judge_options, say_judged, simulated_runs
from traceladder.cli.span_source_opt import add_source_options, evaluate_from_source, uses_sources
from traceladder.errors import ExitCode
from traceladder.evaluation import evaluate_store
from traceladder.evaluation.evaluate import DUCKDB_MEMORY
from traceladder.evaluation.policy_check import warn_unseen_policy_sections
from traceladder.storage.db import open_store
from traceladder.storage.readers import read_run_models
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
    live = live_options(args)
    ladder = ladder_for(args)
    if uses_sources(args):
        return evaluate_from_source(args, live, ladder)

    def say(text: str) -> None:
        print(f"traceladder: evaluate: {printable(text)}", file=sys.stderr, flush=True)

    with open_store(db_path(args)) as store:
        # Under evaluate's cap: uncapped, DuckDB kept every block of the attributes column it read
        # (~1.4 GB on 1M agent spans) for the rest of the command.
        with store.memory_limit(DUCKDB_MEMORY, threads=1):
            models = read_run_models(store, args.run)
        judge = judge_options(args, simulated=simulated_runs(models))
        summary = evaluate_store(
            store,
            run_id=args.run,
            domain=args.domain,
            cases_path=args.cases,
            ladder=ladder,
            live=live,
            judge=judge,
        )
        say_judged(summary)
        warn_unseen_policy_sections(store, live.policies, say)
    counts = " ".join(f"{v}={n}" for v, n in sorted(summary.verdicts.items()))
    counts += f" conversations={summary.conversations}" if summary.conversations else ""
    print(f"evaluated={summary.units} runs={','.join(summary.runs) or '-'} {counts}".rstrip())
    return ExitCode.OK
