"""`traceladder consistency RUN RUN RUN…`: agreement, flaky cases, pass^k and pass@k."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from traceladder.cli.common import add_db_option, db_path, run_id_arg
from traceladder.errors import UserError
from traceladder.evaluators.consistency import consistency
from traceladder.files import write_text
from traceladder.storage.db import Store
from traceladder.storage.runs import run_info, verdicts


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


def build_record(store: Store, run_ids: list[str]) -> dict[str, Any]:
    if len(run_ids) < 2:
        raise UserError("consistency needs at least two runs")
    repeated = sorted({r for r in run_ids if run_ids.count(r) > 1})
    if repeated:
        raise UserError(
            f"run {repeated[0]} is listed more than once; each run is one trial, give distinct runs"
        )
    infos = [run_info(store, r) for r in run_ids]
    first = infos[0]
    for info in infos:
        if not info.complete:
            raise UserError(f"not comparable: {info.incompleteness()}")
        if info.selection != first.selection:
            raise UserError(
                f"runs {first.run_id} and {info.run_id} ran different selections of cases; compare runs "
                "of the same selection"
            )
    for info in infos[1:]:
        differing = sorted(
            k for k in first.input_hashes if first.input_hashes.get(k) != info.input_hashes.get(k)
        )
        if info.model != first.model:
            differing.insert(0, "model")
        if differing:
            raise UserError(
                f"runs {first.run_id} and {info.run_id} are not comparable: different {', '.join(differing)}"
            )
    trials: dict[str, list[str]] = {}
    for run_id in run_ids:
        for (case_id, _), (verdict, _) in sorted(verdicts(store, run_id).items()):
            trials.setdefault(case_id, []).append(verdict)
    body = consistency(trials)
    return {
        "schema": "ConsistencyV1",
        "runs": run_ids,
        "model": first.model,
        "input_hashes": first.input_hashes,
        "complete": all(i.status == "complete" for i in infos),
        **body,
    }


def handle(args: argparse.Namespace) -> int:
    with Store(db_path(args), read_only=True) as store:
        record = build_record(store, list(args.runs))
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
    return 0
