"""`traceladder evaluate`: judge every trace in the store (or one run's)."""

from __future__ import annotations

import argparse
from pathlib import Path

from traceladder.cli.common import add_db_option, add_domain_option, db_path, run_id_arg
from traceladder.evaluation import evaluate_store
from traceladder.storage.db import open_store


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "evaluate",
        help="judge stored traces with the rung-ordered evaluators; replaces earlier results",
        description="Judge every trace in the store: a trace carrying traceladder.case.id (suite runs, "
        "imported traces) gets every rung; a trace without a case gets the rungs it has inputs for "
        "(rung 1 needs tool schemas: --domain), the others are not_evaluated with the reason. "
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
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    with open_store(db_path(args)) as store:
        summary = evaluate_store(store, run_id=args.run, domain=args.domain, cases_path=args.cases)
    counts = " ".join(f"{v}={n}" for v, n in sorted(summary.verdicts.items()))
    print(f"evaluated={summary.units} runs={','.join(summary.runs) or '-'} {counts}".rstrip())
    return 0
