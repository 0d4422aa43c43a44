"""`traceladder baseline review-template|lock|show|check`: the locked, hash-bound baseline."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from traceladder.cli.common import add_db_option, db_path, int_range, run_id_arg
from traceladder.cli.judge_options import say_judged
from traceladder.cli.run_options import add_run_options, run_request
from traceladder.errors import ExitCode
from traceladder.files import write_text
from traceladder.report.baseline import MAX_RUNS, MIN_RUNS
from traceladder.store.db import open_store
from traceladder.workflows.baseline_files import (
    CheckRequest,
    LockRequest,
    check_baseline,
    load_baseline,
    lock_baseline,
    make_review_template,
)

if TYPE_CHECKING:
    from traceladder.workflows.run_request import RunResult


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("baseline", help="lock, show and check a hash-bound baseline (BaselineV1)")
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    init = actions.add_parser(
        "init",
        help="run the suite N times, write the consistency record and the review template, and say "
        "what to review before `baseline lock`",
        description="Everything before the review, in one command: --runs complete runs of --model with "
        "identical inputs (each evaluated; sim:faulty run i uses seed SEED + i), their consistency record "
        "(DIR/consistency.json) and the review template of the first, canonical run (DIR/review.json). "
        "The last line says exactly what to review and the `baseline lock` command to run afterwards. "
        "Pass the same run flags (--max-steps, --timeout, …) your CI's `traceladder run` passes: the run "
        "configuration is part of what a baseline is comparable with. With --agent MODULE:FUNCTION or "
        "--agent-cmd CMD the runs are of your agent under test, as `run --agent` runs it (its version "
        "recorded). An existing DIR/review.json or DIR/baseline.json is never overwritten.",
    )
    add_run_options(init, baseline=True)
    init.add_argument(
        "--runs", type=int_range(MIN_RUNS, MAX_RUNS), default=MIN_RUNS, metavar="N",
        help=f"runs to lock from ({MIN_RUNS}..{MAX_RUNS}; default {MIN_RUNS})",
    )  # fmt: skip
    init.add_argument(
        "--dir", type=Path, default=Path("eval"), metavar="DIR",
        help="where the consistency record, the review and (after lock) the baseline go (default ./eval)",
    )  # fmt: skip
    init.set_defaults(handler=handle_init)
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


def handle_init(args: argparse.Namespace) -> int:
    # The runs' modules import the OpenAI client library: loaded only when a baseline is made.
    from traceladder.cli.progress import progress_for
    from traceladder.workflows.baseline_init import InitRequest, init_baseline

    path = db_path(args)
    request = InitRequest(run_request(args), args.runs, args.dir)
    shown = progress_for(stderr_is_terminal=sys.stderr.isatty())
    result = init_baseline(path, request, progress_for=shown, on_run=_evaluated)
    print(f"run_ids={','.join(result.run_ids)}")
    print(f"db={path}")
    print(f"consistency_path={result.paths.consistency}")
    print(f"review_path={result.paths.review} fails={result.fails}")
    print(result.next_step)
    return ExitCode.OK


def _evaluated(i: int, result: RunResult) -> None:
    if result.evaluation is not None:
        say_judged(result.evaluation)
    print(f"traceladder: run {i + 1}: {result.summary.run_id} evaluated", file=sys.stderr, flush=True)


def handle_template(args: argparse.Namespace) -> int:
    with open_store(db_path(args), read_only=True) as store:
        template = make_review_template(store, args.run)
    write_text(args.output, json.dumps(template, indent=2, ensure_ascii=False) + "\n", "review")
    print(
        f"review_path={args.output} fails={len(template['reviews'])} "
        "(classify each as model_error, judge_error or golden_error)"
    )
    return ExitCode.OK


def handle_lock(args: argparse.Namespace) -> int:
    request = LockRequest(args.canonical, args.consistency, args.review, args.output)
    baseline = lock_baseline(db_path(args), request).baseline
    print(f"baseline_path={args.output}")
    print(f"baseline_sha256={baseline['baseline_sha256']}")
    print(f"report_sha256={baseline['report_sha256']} accuracy={baseline['summary']['accuracy']}")
    return ExitCode.OK


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
    return ExitCode.OK


def handle_check(args: argparse.Namespace) -> int:
    result = check_baseline(db_path(args), CheckRequest(args.file, args.run))
    for message in result.messages:
        print(message)
    return ExitCode.OK
