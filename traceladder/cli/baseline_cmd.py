"""`traceladder baseline review-template|lock|show|check`: the locked, hash-bound baseline."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from traceladder.cli.common import add_db_option, db_path, run_id_arg
from traceladder.cli.consistency_cmd import build_record
from traceladder.cli.gate_cmd import load_baseline
from traceladder.domain.retail import load_retail_domain
from traceladder.errors import UserError
from traceladder.evaluators.baseline import (
    LockRefused,
    build_baseline,
    check_lock_runs,
    check_review,
    comparability,
    report_sha256,
    review_template,
)
from traceladder.files import read_json_object, write_text
from traceladder.storage.db import Store
from traceladder.storage.reports import load_report
from traceladder.storage.runs import RunInfo, run_info


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("baseline", help="lock, show and check a hash-bound baseline (BaselineV1)")
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    template = actions.add_parser("review-template", help="write a review file listing every FAIL of a run")
    add_db_option(template)
    template.add_argument("run", type=run_id_arg, metavar="RUN_ID")
    template.add_argument("--output", type=Path, required=True, metavar="FILE")
    template.set_defaults(handler=handle_template)
    lock = actions.add_parser(
        "lock",
        help="bind a canonical run's report to its model, config, date and input hashes",
        description="Requires >= 3 complete runs with identical inputs (their consistency record, from "
        "`traceladder consistency --output`), and a review file classifying every FAIL of the canonical "
        "run as model_error, judge_error or golden_error; judge and golden errors must be 0.",
    )
    add_db_option(lock)
    lock.add_argument(
        "--canonical", required=True, type=run_id_arg, metavar="RUN_ID", help="the run whose report is locked"
    )
    lock.add_argument("--consistency", required=True, type=Path, metavar="FILE", help="ConsistencyV1 record")
    lock.add_argument("--review", required=True, type=Path, metavar="FILE", help="ReviewV1 file")
    lock.add_argument(
        "--output", required=True, type=Path, metavar="FILE", help="where to write the baseline"
    )
    lock.set_defaults(handler=handle_lock)
    show = actions.add_parser("show", help="print a baseline's identity and summary")
    show.add_argument("file", type=Path)
    show.set_defaults(handler=handle_show)
    check = actions.add_parser(
        "check",
        help="verify a baseline's hashes, and a run's comparability with it",
        description="Exit 0 when the file verifies (and the canonical report in the store still hashes "
        "to report_sha256, when the store has it; and --run is comparable, when given); 1 when a hash "
        "does not verify; 2 when --run is not comparable.",
    )
    add_db_option(check)
    check.add_argument("file", type=Path)
    check.add_argument("--run", type=run_id_arg, metavar="RUN_ID", help="also check this run's comparability")
    check.set_defaults(handler=handle_check)


def _lock_facts(info: RunInfo) -> dict[str, Any]:
    return {
        "run_id": info.run_id, "model": info.model, "input_hashes": info.input_hashes,
        "selection": info.selection, "complete": info.complete, "incompleteness": info.incompleteness(),
    }  # fmt: skip


def handle_template(args: argparse.Namespace) -> int:
    with Store(db_path(args), read_only=True) as store:
        rows = store.fetchall(
            "SELECT case_id, repeat_index, failure_class, explanation FROM results "
            "WHERE run_id = ? AND verdict = 'FAIL' ORDER BY case_id, repeat_index",
            [args.run],
        )
        run_info(store, args.run)
    write_text(
        args.output,
        json.dumps(review_template(args.run, rows), indent=2, ensure_ascii=False) + "\n",
        "review",
    )
    print(
        f"review_path={args.output} fails={len(rows)} "
        "(classify each as model_error, judge_error or golden_error)"
    )
    return 0


def handle_lock(args: argparse.Namespace) -> int:
    consistency = read_json_object(args.consistency, "consistency")
    review = read_json_object(args.review, "review")
    if args.canonical not in consistency.get("runs", []):
        raise UserError(f"the canonical run {args.canonical} is not among the consistency record's runs")
    tools = load_retail_domain().tool_names
    with Store(db_path(args), read_only=True) as store:
        runs = [_lock_facts(run_info(store, r)) for r in consistency["runs"]]
        fresh = build_record(store, list(consistency["runs"]))
        report = load_report(store, args.canonical, tools)
    if fresh["per_case"] != consistency.get("per_case"):
        raise UserError(
            f"{args.consistency} does not match the stored results; "
            "re-create it with `traceladder consistency`"
        )
    fails = {(r["case_id"], r["repeat_index"]) for r in report["results"] if r["verdict"] == "FAIL"}
    try:
        check_lock_runs(runs)
        counts = check_review(review, args.canonical, fails)
    except LockRefused as exc:
        raise UserError(f"baseline not locked: {exc}") from None
    baseline = build_baseline(report["run"], report, consistency, counts)
    write_text(
        args.output, json.dumps(baseline, indent=2, ensure_ascii=False, sort_keys=True) + "\n", "baseline"
    )
    print(f"baseline_path={args.output}")
    print(f"baseline_sha256={baseline['baseline_sha256']}")
    print(f"report_sha256={baseline['report_sha256']} accuracy={baseline['summary']['accuracy']}")
    return 0


def handle_show(args: argparse.Namespace) -> int:
    b = load_baseline(args.file)
    s = b["summary"]
    print(f"baseline {args.file}: {b['schema']} locked {b['locked_at']}")
    print(
        f"model={b['model']} provider={b['provider']} host={b['base_url_host']} canonical_run={b['run_id']}"
    )
    print(f"runs={','.join(b['runs'])}")
    print(f"accuracy={s['accuracy']} scored={s['scored_count']} verdicts={json.dumps(s['verdict_counts'])}")
    print("dimensions: " + ", ".join(f"{d}={a}" for d, a in s["dimensions"].items()))
    print("pass^k: " + ", ".join(f"k={k}:{v}" for k, v in b["consistency"]["pass_hat_k"].items()))
    for key, value in sorted(b["input_hashes"].items()):
        print(f"input_hash.{key}={value}")
    print(f"report_sha256={b['report_sha256']}")
    print(f"baseline_sha256={b['baseline_sha256']}")
    return 0


def handle_check(args: argparse.Namespace) -> int:
    baseline = load_baseline(args.file)  # an edited file is VerificationFailed: exit 1
    print(f"baseline_sha256 verified ({baseline['baseline_sha256'][:12]}…)")
    path = db_path(args)
    if path.exists():
        with Store(path, read_only=True) as store:
            has_run = store.fetchall("SELECT count(*) FROM results WHERE run_id = ?", [baseline["run_id"]])[
                0
            ][0]
            report = (
                load_report(store, baseline["run_id"], load_retail_domain().tool_names) if has_run else None
            )
            info = run_info(store, args.run) if args.run else None
        if report is not None:
            if report_sha256(report) != baseline["report_sha256"]:
                print(f"traceladder: the canonical run's report in {path} no longer hashes to report_sha256",
                      file=sys.stderr)  # fmt: skip
                return 1
            print("report_sha256 verified against the canonical run in the store")
        if info is not None:
            differences = comparability(baseline, info.model, info.input_hashes)
            if differences:
                print(f"traceladder: run {info.run_id} is not comparable: different {', '.join(differences)}",
                      file=sys.stderr)  # fmt: skip
                return 2
            print(f"run {info.run_id} is comparable with the baseline")
    elif args.run:
        raise UserError(f"no store at {path} to find run {args.run}; pass --db")
    return 0
