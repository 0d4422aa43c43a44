"""The options of `run`, shared with `baseline init`, and the `RunRequest` they ask for.

Both commands import this module, never each other (a command module imports no other)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from traceladder.cli.agent_options import add_agent_options
from traceladder.cli.common import (
    add_db_option,
    add_domain_option,
    add_rungs_option,
    int_range,
    ladder_for,
    run_id_arg,
    seconds,
)
from traceladder.cli.judge_options import add_judge_options, judge_request
from traceladder.produce.agent.config import DEFAULT_MAX_TOKENS, TOKEN_PARAMS

if TYPE_CHECKING:
    from traceladder.workflows.run_request import RunRequest

MAX_REPEAT = 1000


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


def run_request(args: argparse.Namespace) -> RunRequest:
    """The `RunRequest` the flags of `run` (or `baseline init`, which has no --repeat, --resume
    or --no-report) ask for. The ladder is loaded here: a wrong rung name must not cost a run."""
    from traceladder.workflows.run_request import RunRequest

    return RunRequest(
        domain=args.domain, model=args.model, base_url=args.base_url, cases_path=args.cases,
        system_prompt=args.system_prompt, case_ids=tuple(args.case), dimensions=tuple(args.dimension),
        repeat=getattr(args, "repeat", None), concurrency=args.concurrency,
        resume=getattr(args, "resume", None), seed=args.seed, max_steps=args.max_steps,
        timeout_s=args.timeout, request_timeout_s=args.request_timeout, max_tokens=args.max_tokens,
        token_param=args.token_param, retry_attempts=args.retry_attempts,
        retry_base_delay_s=args.retry_base_delay, stop_after_errors=args.stop_after_errors,
        sim_delay_s=args.sim_delay, evaluate=not getattr(args, "no_report", False), ladder=ladder_for(args),
        judge=judge_request(args), user_model=args.user_model,
        agent=args.agent, agent_cmd=args.agent_cmd, agent_version=args.agent_version,
    )  # fmt: skip
