"""`traceladder run`: run the suite against a model into the span store, then judge and report."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from traceladder.agent.client import ModelChoice, announce_default, choose_model
from traceladder.agent.config import AgentConfig, RetryPolicy
from traceladder.agent.runner import ProgressFn, RunOptions, RunSummary, run_suite
from traceladder.cli.common import add_db_option, db_path
from traceladder.cli.report_cmd import evaluate_and_report
from traceladder.domain.base import Domain
from traceladder.domain.retail import load_retail_domain
from traceladder.errors import UserError
from traceladder.storage.db import Store


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "run",
        help="run the case suite against a model (default: the simulated sim:faulty)",
        description="Run the suite: every model request and tool execution becomes a GenAI span "
        "in the store; then evaluate and report. Case FAIL / AGENT_ERROR are outcomes (exit 0).",
    )
    add_db_option(p)
    p.add_argument("--model", help="model name, or sim:oracle / sim:faulty (env TRACELADDER_MODEL)")
    p.add_argument("--base-url", help="OpenAI-compatible base URL (env OPENAI_BASE_URL)")
    p.add_argument(
        "--case", action="append", default=[], metavar="ID", help="run only this case (repeatable)"
    )
    p.add_argument(
        "--dimension", action="append", default=[], metavar="D", help="run only D1..D4 (repeatable)"
    )
    p.add_argument("--cases", type=Path, metavar="FILE", help="case suite JSONL (default: shipped)")
    p.add_argument("--repeat", type=int, default=1, metavar="K", help="run every case K times")
    p.add_argument("--concurrency", type=int, default=4, metavar="N", help="cases in flight (default 4)")
    p.add_argument("--resume", metavar="RUN_ID", help="finish an interrupted run (same model and config)")
    p.add_argument(
        "--seed", type=int, default=None, help="sim:faulty fault seed (env TRACELADDER_SIM_SEED; default 0)"
    )
    p.add_argument("--max-steps", type=int, default=8, help="model requests per case (default 8)")
    p.add_argument("--timeout", type=float, default=120.0, metavar="S", help="per-case timeout (default 120)")
    p.add_argument("--retry-attempts", type=int, default=4, help="attempts per model request (default 4)")
    p.add_argument(
        "--retry-base-delay",
        type=float,
        default=0.5,
        metavar="S",
        help="first backoff (default 0.5)",
    )
    p.add_argument("--no-report", action="store_true", help="skip evaluation and the report")
    p.add_argument("--sim-delay", type=float, default=0.0, help=argparse.SUPPRESS)
    p.set_defaults(handler=handle)


def _config_from_args(args: argparse.Namespace, model: str, base_url: str | None) -> AgentConfig:
    for name in ("repeat", "concurrency", "max_steps", "retry_attempts"):
        if getattr(args, name) < 1:
            raise UserError(f"--{name.replace('_', '-')} must be at least 1")
    return AgentConfig(
        model=model,
        base_url=base_url,
        max_steps=args.max_steps,
        case_timeout_s=args.timeout,
        retry=RetryPolicy(max_attempts=args.retry_attempts, base_delay_s=args.retry_base_delay),
        sim_seed=_seed(args) if model.startswith("sim:faulty") else None,
    )


def _seed(args: argparse.Namespace) -> int:
    if args.seed is not None:
        return int(args.seed)
    raw = os.environ.get("TRACELADDER_SIM_SEED", "0")
    try:
        return int(raw)
    except ValueError:
        raise UserError(f"TRACELADDER_SIM_SEED must be an integer, got {raw!r}") from None


def _stored_config(store: Store, run_id: str) -> AgentConfig | None:
    rows = store.fetchall("SELECT config FROM runs WHERE run_id = ?", [run_id])
    if not rows:
        return None
    raw = json.loads(rows[0][0])
    raw["retry"] = RetryPolicy(**raw["retry"])
    return AgentConfig(**raw)


def plain_progress(done: int, total: int, case_id: str, status: str) -> None:
    print(f"[{done}/{total}] {case_id} {status}", file=sys.stderr, flush=True)


def handle(args: argparse.Namespace) -> int:
    domain = load_retail_domain()
    path = db_path(args)
    with Store(path) as store:
        stored = _stored_config(store, args.resume) if args.resume else None
        if stored is not None:
            choice = choose_model(stored.model, stored.base_url)
            config = stored
        else:
            choice = choose_model(args.model, args.base_url)
            announce_default(choice)
            config = _config_from_args(args, choice.model, choice.base_url)
        options = RunOptions(
            case_ids=tuple(args.case), dimensions=tuple(args.dimension), repeat=args.repeat,
            concurrency=args.concurrency, resume=args.resume, cases_path=args.cases,
            sim_delay_s=args.sim_delay,
        )  # fmt: skip
        summary = _run_with_progress(store, choice, config, options, domain)
        report_path = None
        if not args.no_report:
            report_path = evaluate_and_report(store, summary.run_id, args.cases, path)
        counts = f"cases={summary.finished}/{summary.total} agent_errors={summary.agent_errors}"
        print(f"status={summary.status} {counts}")
        print(f"run_id={summary.run_id}")
        print(f"db={path}")
        if report_path:
            print(f"report_path={report_path}")
    return 0


def _run_with_progress(
    store: Store, choice: ModelChoice, config: AgentConfig, options: RunOptions, domain: Domain
) -> RunSummary:
    if not sys.stderr.isatty():
        return run_suite(store, choice, config, options, domain=domain, progress=plain_progress)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, transient=True) as bar:
        task = bar.add_task(f"running {choice.model}", total=None)

        def tick(done: int, total: int, case_id: str, status: str) -> None:
            bar.update(task, completed=done, total=total, description=f"{choice.model} {case_id}")

        progress: ProgressFn = tick
        return run_suite(store, choice, config, options, domain=domain, progress=progress)
