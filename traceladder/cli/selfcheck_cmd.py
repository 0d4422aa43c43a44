"""`traceladder selfcheck`: measure the judge's misjudgment rate on labelled simulated faults."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from traceladder.cli.common import add_domain_option, domain_name
from traceladder.domain.registry import load_domain
from traceladder.errors import UserError
from traceladder.storage.db import Store


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "selfcheck",
        help="judge sim:faulty runs and compare every verdict with the injected fault's label",
        description="Runs sim:faulty over the suite once per seed, evaluates, and compares each "
        "case's verdict and failure class with the label of the fault injected. Exit 1 on any "
        "disagreement.",
    )
    p.add_argument("--seeds", default="1,2,3,4,5", help="comma-separated fault seeds (default 1,2,3,4,5)")
    p.add_argument("--db", type=Path, help="keep the runs in this store (default: a temporary one)")
    p.add_argument("--cases", type=Path, metavar="FILE", help="case suite JSONL (default: the domain's)")
    add_domain_option(p)
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from traceladder.workflows.selfcheck import selfcheck  # runs the agent: imports the OpenAI library

    try:
        seeds = [int(s) for s in args.seeds.split(",")]
    except ValueError:
        raise UserError(f"--seeds must be comma-separated integers like 1,2,3, got {args.seeds!r}") from None
    if len(set(seeds)) != len(seeds):
        raise UserError(f"--seeds lists a seed twice: {args.seeds!r}")
    with tempfile.TemporaryDirectory() as tmp, Store(args.db or Path(tmp) / "selfcheck.duckdb") as store:
        result = selfcheck(store, load_domain(domain_name(args)), seeds, args.cases)
    print(f"selfcheck: {result.judged} case runs judged over seeds {','.join(map(str, seeds))}")
    print("faults injected: " + ", ".join(f"{k}={v}" for k, v in result.faults.items()))
    for d in result.disagreements:
        where = f"{d.run_id} {d.case_id} fault={d.fault}"
        print(f"DISAGREE {where} expected={d.expected} got={d.actual}: {d.explanation}")
    print(f"misjudgment_rate={result.misjudgment_rate:.4f} ({len(result.disagreements)}/{result.judged})")
    return 1 if result.disagreements else 0
