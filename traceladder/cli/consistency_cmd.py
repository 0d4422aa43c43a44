"""`traceladder consistency RUN RUN RUN…`: agreement, flaky cases, pass^k and pass@k."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from traceladder.cli.common import add_db_option, db_path, run_id_arg
from traceladder.errors import ExitCode
from traceladder.files import write_text
from traceladder.workflows.consistency_record import ConsistencyRequest, consistency_of


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "consistency",
        help="compare repeated runs: per-case agreement, flaky cases, pass^k next to pass@k",
        description="Each run (and each --repeat inside a run) is one trial per case. pass^k is the "
        "chance that k trials all pass (tau-bench); pass@k that at least one does.",
    )
    add_db_option(p)
    p.add_argument(
        "runs",
        nargs="+",
        type=run_id_arg,
        metavar="RUN_ID",
        help="two or more evaluated runs with the same inputs",
    )
    p.add_argument("--output", type=Path, metavar="FILE", help="also write the consistency record as JSON")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    record = consistency_of(db_path(args), ConsistencyRequest(tuple(args.runs))).record
    if args.output:
        write_text(args.output, json.dumps(record, indent=2, ensure_ascii=False) + "\n", "consistency record")
        print(f"consistency_path={args.output}")
    print(f"consistency over {len(record['runs'])} runs of {record['model']}: {record['cases']} cases")
    print(f"mean per-case agreement: {record['mean_agreement']:.3f}")
    print("k        " + "  ".join(f"{k:>6}" for k in record["pass_hat_k"]))
    print("pass^k   " + "  ".join(f"{v:6.3f}" for v in record["pass_hat_k"].values()))
    print("pass@k   " + "  ".join(f"{v:6.3f}" for v in record["pass_at_k"].values()))
    flaky = record["flaky_cases"]
    print(f"flaky cases ({len(flaky)}): " + (", ".join(flaky) if flaky else "none"))
    for case_id in flaky:
        print(f"  {case_id}: {' '.join(record['per_case'][case_id]['verdicts'])}")
    return ExitCode.OK
