"""`traceladder selfcheck`: measure the judge's misjudgment rate on labelled simulated faults."""

from __future__ import annotations

import argparse
from pathlib import Path

from traceladder.cli.common import add_domain_option, domain_name
from traceladder.cli.judge_options import add_judge_endpoint_options
from traceladder.errors import ExitCode, UserError


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
    judge = p.add_argument_group("--judge: measure a judge against the labelled meta-evaluation set")
    judge.add_argument(
        "--judge",
        action="store_true",
        help="measure the judge instead: agreement with labelled trajectories (accuracy, Cohen's "
        "kappa, confusion per criterion) and rerun drift. A real judge is checked first with one "
        "GET {judge-base-url}/models: unreachable (connection refused, DNS, TLS) or a refused "
        "key (401) or request (403) exits 2 with the cause; so does a judge that gave no usable "
        "reply at all (an unusable judge is not a 0%% judge)",
    )
    add_judge_endpoint_options(judge, "the judge to measure (default: sim:judge)")
    judge.add_argument(
        "--meta", type=Path, metavar="FILE", help="labelled set JSONL (default: the shipped one)"
    )
    judge.add_argument(
        "--rounds",
        type=int,
        default=3,
        metavar="K",
        help="judge every item K times with no cache, for drift (default 3)",
    )
    judge.add_argument(
        "--min-kappa",
        type=float,
        metavar="K",
        help="exit 1 when a criterion's kappa is below K (or undefined)",
    )
    judge.add_argument(
        "--max-drift", type=float, metavar="D", help="exit 1 when a criterion's rerun drift is above D"
    )
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    # runs the agent or asks a judge: imports the OpenAI library
    from traceladder.cli.judge_selfcheck import judge_request, print_judge_selfcheck
    from traceladder.workflows.selfcheck import SelfcheckRequest, run_selfcheck

    if args.judge:
        return print_judge_selfcheck(run_selfcheck(judge_request(args)))
    try:
        seeds = tuple(int(s) for s in args.seeds.split(","))
    except ValueError:
        raise UserError(f"--seeds must be comma-separated integers like 1,2,3, got {args.seeds!r}") from None
    result = run_selfcheck(SelfcheckRequest(seeds, domain_name(args), args.db, args.cases))
    print(f"selfcheck: {result.judged} case runs judged over seeds {','.join(map(str, seeds))}")
    print("faults injected: " + ", ".join(f"{k}={v}" for k, v in result.faults.items()))
    for d in result.disagreements:
        where = f"{d.run_id} {d.case_id} fault={d.fault}"
        print(f"DISAGREE {where} expected={d.expected} got={d.actual}: {d.explanation}")
    print(f"misjudgment_rate={result.misjudgment_rate:.4f} ({len(result.disagreements)}/{result.judged})")
    return ExitCode.CHECK_FAILED if result.disagreements else ExitCode.OK
