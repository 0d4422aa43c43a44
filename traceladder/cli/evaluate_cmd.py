"""`traceladder evaluate`: judge every case-tagged trace in the store (or one run's)."""

from __future__ import annotations

import argparse
from pathlib import Path

from traceladder.cases.loader import load_cases
from traceladder.cli.common import add_db_option, db_path, run_id_arg
from traceladder.domain.retail import load_retail_domain
from traceladder.errors import UserError
from traceladder.evaluators.judge import JudgeContext
from traceladder.storage.db import Store
from traceladder.storage.results import EvaluationSummary, evaluate_store


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "evaluate",
        help="judge stored traces with the rung-ordered evaluators; replaces earlier results",
        description="Judge every trace carrying traceladder.case.id (suite runs, imported traces) "
        "against a case file, and write results and findings. Re-evaluating replaces a run's results.",
    )
    add_db_option(p)
    p.add_argument(
        "--run", type=run_id_arg, metavar="RUN_ID", help="only this run (default: every run in the store)"
    )
    p.add_argument("--cases", type=Path, metavar="FILE", help="case suite JSONL (default: shipped)")
    p.set_defaults(handler=handle)


def evaluate(store: Store, run_id: str | None, cases_path: Path | None) -> EvaluationSummary:
    cases = load_cases(cases_path)
    summary = evaluate_store(store, cases, JudgeContext.from_domain(load_retail_domain()), run_id=run_id)
    if run_id and summary.units == 0:
        raise UserError(f"no traces of run {run_id} in {store.path}")
    return summary


def handle(args: argparse.Namespace) -> int:
    with Store(db_path(args)) as store:
        summary = evaluate(store, args.run, args.cases)
    print(f"evaluated={summary.units} runs={','.join(summary.runs) or '-'}")
    if summary.unknown_cases:
        print(f"skipped traces of unknown cases: {', '.join(summary.unknown_cases)}")
    return 0
