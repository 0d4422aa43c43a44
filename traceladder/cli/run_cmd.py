"""`traceladder run`: run the suite against a model into the span store, then judge and report."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from traceladder.agent.config import DEFAULT_MAX_TOKENS, TOKEN_PARAMS, AgentConfig, RetryPolicy, redact_url
from traceladder.cli.agent_options import add_agent_options, handle_agent, wants_agent
from traceladder.cli.common import (
    add_db_option,
    add_domain_option,
    add_rungs_option,
    db_path,
    domain_name,
    int_range,
    ladder_for,
    run_id_arg,
    seconds,
    terminal,
)
from traceladder.cli.judge_options import add_judge_options, judge_options, say_judged
from traceladder.domain.base import Domain
from traceladder.domain.registry import load_domain, with_system_prompt
from traceladder.errors import ExitCode, UserError
from traceladder.evaluation import evaluate_store
from traceladder.reporting.terminal import render_text
from traceladder.storage.db import Store, open_store
from traceladder.workflows.report_files import load_report, save_json_report

if TYPE_CHECKING:
    # The agent modules import the OpenAI client library (~0.4 s): loaded only when a run starts,
    # so that `--help` and a refused flag answer fast.
    from traceladder.agent.client import ModelChoice
    from traceladder.agent.runner import RunOptions, RunSummary
    from traceladder.cases.validator import ValidSuite
    from traceladder.cli.progress import RunProgress


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "run",
        help="run the case suite against a model (default: the simulated sim:faulty)",
        description="Run the suite: every model request and tool execution becomes a GenAI span "
        "in the store; then evaluate and report. Case FAIL / AGENT_ERROR are outcomes (exit 0), "
        "but a run of a real model in which every case is AGENT_ERROR measured nothing (exit 2). "
        "A real endpoint "
        "is checked before the first case with one GET {base-url}/models: unreachable "
        "(connection refused, DNS, TLS) or a refused key (401) or request (403) stops with one "
        "line and exit 2, nothing recorded (a 404 there only means no /models route). Until a "
        "case has worked, a 401, 403, 404 (model not found, wrong base URL) or connection failure "
        "on a chat request stops the run the same way; so do --stop-after-errors cases in a row "
        "with the same endpoint error. A stopped run keeps every case recorded before the streak "
        "(--resume runs the rest). Each case prints one progress line on stderr: its verdict by the "
        "code rungs (FAIL with its class and rung; PASS, with rung 5 still to come when a judge "
        "runs) or AGENT_ERROR with its error type, then an estimate of the time left; with "
        "--no-report only 'answered' (no evaluation follows). "
        "Ctrl-C or SIGTERM stops within seconds, keeping every finished case (exit 130 / 143). "
        "Keys: OPENAI_API_KEY goes only to --base-url / OPENAI_BASE_URL (else api.openai.com), "
        "OPENROUTER_API_KEY only to OpenRouter (the default endpoint when it is the only key).",
    )
    add_run_options(p)
    p.set_defaults(handler=handle)


def add_run_options(p: argparse.ArgumentParser, *, baseline: bool = False) -> None:
    """The options of `run`, shared with `baseline init` (which runs the suite too, so a baseline
    is locked with exactly the configuration a later `run` with the same flags has). `baseline`
    leaves out what a baseline's runs must not vary: --repeat, --resume and --no-report."""
    add_db_option(p)
    add_domain_option(p)
    p.add_argument("--model", help="model name, or sim:oracle / sim:faulty (env TRACELADDER_MODEL)")
    p.add_argument(
        "--base-url",
        help="OpenAI-compatible base URL (env OPENAI_BASE_URL; default api.openai.com, or OpenRouter "
        "when OPENROUTER_API_KEY is the only key; TRACELADDER_OPENAI_URL / TRACELADDER_OPENROUTER_URL "
        "replace those two, and keys follow them)",
    )
    p.add_argument(
        "--case", action="append", default=[], metavar="ID", help="run only this case (repeatable)"
    )
    p.add_argument(
        "--dimension",
        action="append",
        default=[],
        metavar="D",
        help="run only this dimension, e.g. D2 (repeatable)",
    )
    p.add_argument("--cases", type=Path, metavar="FILE", help="case suite JSONL (default: the domain's)")
    p.add_argument(
        "--system-prompt",
        type=Path,
        metavar="FILE",
        help="the agent's system prompt from this UTF-8 file instead of the domain's (test a prompt change; "
        "the gate compares it with a baseline of the old one)",
    )
    if not baseline:
        p.add_argument(
            "--repeat",
            type=int_range(1, MAX_REPEAT),
            default=None,
            metavar="K",
            help="run every case K times",
        )
    p.add_argument(
        "--concurrency", type=int_range(1, 64), default=4, metavar="N", help="cases in flight (default 4)"
    )
    if not baseline:
        p.add_argument(
            "--resume",
            type=run_id_arg,
            metavar="RUN_ID",
            help="finish an interrupted run with its own model, configuration and selection",
        )
    seed_help = "sim:faulty fault seed (env TRACELADDER_SIM_SEED; default 0)"
    if baseline:
        seed_help = "sim:faulty fault seed of the first run; run i uses SEED + i (default 0)"
    p.add_argument("--seed", type=int, default=None, help=seed_help)
    p.add_argument(
        "--max-steps", type=int_range(1, 100), default=8, help="model requests per case (default 8)"
    )
    p.add_argument(
        "--timeout",
        type=seconds(),
        default=120.0,
        metavar="S",
        help="wall-clock limit per case (default 120)",
    )
    p.add_argument(
        "--request-timeout",
        type=seconds(),
        default=60.0,
        metavar="S",
        help="limit per model request before it is retried (default 60)",
    )
    p.add_argument(
        "--max-tokens",
        type=int_range(1, 1_000_000),
        default=DEFAULT_MAX_TOKENS,
        metavar="N",
        help=f"output-token cap per model request (default {DEFAULT_MAX_TOKENS})",
    )
    p.add_argument(
        "--token-param",
        choices=TOKEN_PARAMS,
        default="auto",
        help="request field for the cap: auto (max_completion_tokens for api.openai.com, max_tokens "
        "elsewhere; switched once if the server refuses it)",
    )
    p.add_argument(
        "--retry-attempts", type=int_range(1, 20), default=4, help="attempts per model request (default 4)"
    )
    p.add_argument(
        "--retry-base-delay",
        type=seconds(allow_zero=True, high=60.0),
        default=0.5,
        metavar="S",
        help="first backoff (default 0.5)",
    )
    p.add_argument(
        "--stop-after-errors",
        type=int_range(0, 100_000),
        default=5,
        metavar="N",
        help="stop the run when N cases in a row end with the same endpoint error (http_503, "
        "connection, response_not_json, …); those N are not kept, so --resume runs them again "
        "(default 5; 0: never)",
    )
    if not baseline:
        p.add_argument("--no-report", action="store_true", help="skip evaluation and the report")
    p.add_argument(
        "--sim-delay", type=seconds(allow_zero=True, high=10.0), default=0.0, help=argparse.SUPPRESS
    )
    add_rungs_option(p)
    add_judge_options(p)
    add_agent_options(p)


MAX_REPEAT = 1000
# Flags that choose what a new run does; --resume continues a run exactly as it started.
_SELECTION_FLAGS = ("case", "dimension", "repeat", "seed", "cases", "domain", "system_prompt")


def _config_from_args(args: argparse.Namespace, model: str, base_url: str | None) -> AgentConfig:
    return AgentConfig(
        model=model,
        base_url=base_url,
        max_steps=args.max_steps,
        case_timeout_s=args.timeout,
        request_timeout_s=args.request_timeout,
        max_tokens=args.max_tokens,
        token_param=args.token_param,
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


def _resumed(store: Store, args: argparse.Namespace) -> tuple[ModelChoice, AgentConfig, Domain]:
    """The model and configuration a run started with. Flags that would change them are refused,
    not ignored; --base-url is taken (the stored one has its credentials redacted) but must be
    the same endpoint."""
    from traceladder.agent.client import choose_model
    from traceladder.agent.runner import stored_run

    given = [f"--{name}" for name in _SELECTION_FLAGS if getattr(args, name) not in (None, [])]
    if given:
        raise UserError(f"--resume continues {args.resume} with its own selection; drop {', '.join(given)}")
    stored = stored_run(store, args.resume)
    if stored is None:
        raise UserError(f"no run {args.resume} in {store.path}; see `traceladder sql 'SELECT * FROM runs'`")
    raw, domain = stored
    if args.model and args.model != raw["model"]:
        raise UserError(f"run {args.resume} used model {raw['model']!r}; drop --model or pass that one")
    stored_url = raw.get("base_url")
    url = args.base_url or (stored_url and os.environ.get("OPENAI_BASE_URL")) or stored_url
    if url != stored_url and redact_url(url) != stored_url:
        raise UserError(f"--base-url is not the endpoint run {args.resume} used ({stored_url})")
    if raw.pop("base_url_redacted", False) and url == stored_url:
        raise UserError(f"run {args.resume} used a base URL with credentials; pass it again with --base-url")
    raw["retry"] = RetryPolicy(**raw["retry"])
    config = AgentConfig(**dict(raw, base_url=url))
    return choose_model(config.model, url), config, load_domain(domain or domain_name(args))


def _suite(domain: Domain, cases: Path | None) -> ValidSuite:
    """The run's suite, read and validated once: the runner, the progress line and the evaluation
    after the run all take these cases instead of reading the file again."""
    from traceladder.cases.loader import suite_path
    from traceladder.cases.validator import read_valid_suite

    return read_valid_suite(suite_path(domain, cases), domain)


def _agent_run(args: argparse.Namespace) -> bool:
    """Whether the run `--resume` names is a run of an agent under test."""
    from traceladder.workflows.agent_run import recorded_agent_model

    with open_store(db_path(args)) as store:
        return recorded_agent_model(store, args.resume) is not None


def handle(args: argparse.Namespace) -> int:
    from traceladder.agent.client import choose_model
    from traceladder.agent.runner import RunOptions
    from traceladder.agent.sim import is_sim
    from traceladder.cli.progress import RunProgress

    if wants_agent(args) or (args.resume and _agent_run(args)):
        return handle_agent(args)
    path = db_path(args)
    with open_store(path) as store:
        if args.resume:
            choice, config, domain = _resumed(store, args)
        else:
            domain = with_system_prompt(load_domain(domain_name(args)), args.system_prompt)
            choice = choose_model(args.model, args.base_url)
            config = _config_from_args(args, choice.model, choice.base_url)
        judge = None if args.no_report else judge_options(args, simulated=is_sim(choice.model))
        ladder = ladder_for(args)  # before the run: a wrong rung name must not cost a whole run
        suite = _suite(domain, args.cases)
        options = RunOptions(
            case_ids=tuple(args.case), dimensions=tuple(args.dimension), repeat=args.repeat or 1,
            concurrency=args.concurrency, resume=args.resume, cases_path=args.cases, suite=suite,
            sim_delay_s=args.sim_delay, stop_after_errors=args.stop_after_errors,
        )  # fmt: skip
        progress = RunProgress(
            store, domain=domain.name, cases_path=args.cases, ladder=ladder, evaluated=not args.no_report,
            judge_after=judge is not None, cases=suite.cases,
        )  # fmt: skip
        summary = _run_with_progress(store, choice, config, options, domain, progress)
        report_path = None
        if not args.no_report:
            evaluated = evaluate_store(
                store,
                run_id=summary.run_id,
                domain=domain.name,
                cases_path=args.cases,
                cases=suite.cases,
                ladder=ladder,
                judge=judge,
            )
            say_judged(evaluated)
            report = load_report(store, summary.run_id)
            render_text(report, terminal())
            report_path = save_json_report(report, path)
        counts = f"cases={summary.finished}/{summary.total} agent_errors={summary.agent_errors}"
        print(f"status={summary.status} {counts}")
        print(f"run_id={summary.run_id}")
        print(f"db={path}")
        if report_path:
            print(f"report_path={report_path}")
        # A simulated model's AGENT_ERRORs are injected, labelled faults, not a misconfiguration.
        if summary.finished and summary.agent_errors == summary.finished and not is_sim(choice.model):
            raise UserError(_nothing_measured(store, summary))
    return ExitCode.OK


def prepare(store: Store, args: argparse.Namespace) -> Callable[[int], str]:
    """For `baseline init`: the model, configuration, selection, judge and ladder these arguments
    ask for, resolved once (a bad flag fails before any run), as a function that runs and
    evaluates run `i` and returns its id. sim:faulty's run i uses seed SEED + i — the simulator's
    stand-in for a real model's sampling noise, which the seed is not part of the run's identity.
    A run that did not complete, or measured nothing, is a `UserError`: no baseline rests on it."""
    from dataclasses import replace

    from traceladder.agent.client import choose_model
    from traceladder.agent.runner import RunOptions
    from traceladder.agent.sim import is_sim
    from traceladder.cli.progress import RunProgress

    domain = with_system_prompt(load_domain(domain_name(args)), args.system_prompt)
    choice = choose_model(args.model, args.base_url)
    config = _config_from_args(args, choice.model, choice.base_url)
    judge = judge_options(args, simulated=is_sim(choice.model))
    ladder = ladder_for(args)
    suite = _suite(domain, args.cases)  # once for all the runs
    options = RunOptions(
        case_ids=tuple(args.case), dimensions=tuple(args.dimension), repeat=1,
        concurrency=args.concurrency, cases_path=args.cases, suite=suite, sim_delay_s=args.sim_delay,
        stop_after_errors=args.stop_after_errors,
    )  # fmt: skip

    def execute(i: int) -> str:
        seeded = replace(config, sim_seed=config.sim_seed + i) if config.sim_seed is not None else config
        progress = RunProgress(
            store, domain=domain.name, cases_path=args.cases, ladder=ladder, evaluated=True,
            judge_after=judge is not None, cases=suite.cases,
        )  # fmt: skip
        summary = _run_with_progress(store, choice, seeded, options, domain, progress)
        if summary.status != "complete":
            raise UserError(
                f"run {summary.run_id} ended {summary.status}; a baseline needs complete runs — finish it "
                f"with `traceladder run --resume {summary.run_id}` or start `baseline init` again"
            )
        if summary.finished and summary.agent_errors == summary.finished and not is_sim(choice.model):
            raise UserError(_nothing_measured(store, summary))
        say_judged(
            evaluate_store(
                store, run_id=summary.run_id, domain=domain.name, cases_path=args.cases,
                cases=suite.cases, ladder=ladder, judge=judge,
            )
        )  # fmt: skip
        print(f"traceladder: run {i + 1}: {summary.run_id} evaluated", file=sys.stderr, flush=True)
        return summary.run_id

    return execute


def _nothing_measured(store: Store, summary: RunSummary) -> str:
    """Every case of the run ended as AGENT_ERROR: no verdict measured the model, so the run
    is not a result (exit 2), whatever a gate later says about its accuracy."""
    rows = store.fetchall(
        "SELECT error_type, count(*) AS n FROM case_runs WHERE run_id = ?"
        " GROUP BY 1 ORDER BY n DESC, 1 LIMIT 1",
        [summary.run_id],
    )
    common = f"; most often {rows[0][0]} ({rows[0][1]} of {summary.finished})" if rows else ""
    return (
        f"every case of run {summary.run_id} ended as AGENT_ERROR, so nothing was measured{common} — "
        f'see `traceladder sql "SELECT case_id, error_type, error_message FROM case_runs WHERE run_id = '
        f"'{summary.run_id}'\"`"
    )


def _run_with_progress(
    store: Store, choice: ModelChoice, config: AgentConfig, options: RunOptions, domain: Domain,
    progress: RunProgress,
) -> RunSummary:  # fmt: skip
    from traceladder.agent.client import announce_default
    from traceladder.agent.runner import run_suite

    def started(run_id: str) -> None:
        announce_default(choice)  # only once the run really starts: an error stays the only line
        progress.start(run_id)

    if not sys.stderr.isatty():
        return run_suite(store, choice, config, options, domain=domain, progress=progress, on_start=started)
    with progress.on_terminal(choice.model) as tick:
        return run_suite(store, choice, config, options, domain=domain, progress=tick, on_start=started)
