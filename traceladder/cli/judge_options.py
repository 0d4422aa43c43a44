"""The judge's command-line options (run, evaluate, watch) → `JudgeOptions`, or None for no judge.

Which judge: `--judge-model`, else `TRACELADDER_JUDGE_MODEL`, else `sim:judge` when every run
judged used a simulated model (the simulator's traces get the simulated judge, so `make eval`
exercises rung 5 with no key), else none — rung 5 is then `not_evaluated`, said so. Which model a
run used is read from its spans (`evaluate.judge.choice.simulated_runs`), so the store and any
copy of its spans (a Parquet export, ClickHouse) get the same judge and the same verdicts.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Mapping
from pathlib import Path

from traceladder.evaluate.judge.choice import JudgeRequest, resolve_judge
from traceladder.evaluate.judge.phase import JudgeBudget, JudgeOptions
from traceladder.evaluate.passes import EvaluationSummary
from traceladder.text import printable

_BUDGET = re.compile(r"^\s*(\d+)\s*(calls?|tokens?)?\s*$")


def judge_budget(text: str) -> JudgeBudget:
    match = _BUDGET.match(text)
    if match is None or int(match.group(1)) < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: use a number of calls (200) or of tokens (50000tokens)")
    n = int(match.group(1))
    return JudgeBudget(tokens=n) if (match.group(2) or "").startswith("token") else JudgeBudget(calls=n)


def add_judge_endpoint_options(group: argparse._ArgumentGroup, model_help: str) -> None:
    """Which judge, where, with which rubric (also `selfcheck --judge`'s options)."""
    group.add_argument("--judge-model", metavar="MODEL", help=model_help)
    group.add_argument(
        "--judge-base-url",
        metavar="URL",
        help="the judge's OpenAI-compatible endpoint (default: TRACELADDER_JUDGE_BASE_URL, else "
        "OPENAI_BASE_URL, else OpenAI — or OpenRouter when OPENROUTER_API_KEY is the only key). "
        "The key: TRACELADDER_JUDGE_API_KEY; else OPENAI_API_KEY, only if the judge is at "
        "OPENAI_BASE_URL's host (api.openai.com when unset); else OPENROUTER_API_KEY, only if "
        "the judge is at OpenRouter. A key never goes to another host",
    )
    group.add_argument(
        "--judge-rubric", type=Path, metavar="FILE", help="rubric TOML (default: the shipped one)"
    )


def add_judge_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("rung 5 (the judge)")
    add_judge_endpoint_options(
        group,
        "judge model: sim:judge (simulated, no key) or any model an OpenAI-compatible server serves "
        "(default: TRACELADDER_JUDGE_MODEL; else sim:judge for simulated-model runs; else no judge)",
    )
    group.add_argument(
        "--judge-budget",
        type=judge_budget,
        metavar="N[tokens]",
        help="stop asking the judge after N calls (or N tokens); the traces left are "
        "not_evaluated at rung 5, said so in the report",
    )
    group.add_argument(
        "--no-cache",
        action="store_true",
        help="ask the judge again even for trajectories it has judged (the new judgments replace "
        "the cached ones)",
    )
    group.add_argument("--no-judge", action="store_true", help="no rung 5, whatever the defaults say")
    group.add_argument(
        "--judge-prices",
        type=Path,
        metavar="FILE",
        help="price table TOML (USD per 1M tokens per model) over the shipped one",
    )
    group.add_argument(
        "--judge-concurrency",
        type=int,
        default=4,
        metavar="N",
        help="judge calls in flight at once (default 4)",
    )


def judge_request(args: argparse.Namespace) -> JudgeRequest:
    """The judge flags of `add_judge_options` as a typed request."""
    return JudgeRequest(
        model=args.judge_model,
        base_url=args.judge_base_url,
        rubric=args.judge_rubric,
        prices=args.judge_prices,
        budget=args.judge_budget,
        cache=not args.no_cache,
        concurrency=args.judge_concurrency,
        off=args.no_judge,
    )


def judge_options(
    args: argparse.Namespace, *, simulated: bool, env: Mapping[str, str] | None = None
) -> JudgeOptions | None:
    """The judge these arguments ask for; `simulated`: every trace judged is a simulated-model run's."""
    return resolve_judge(judge_request(args), simulated=simulated, env=env)


def say_judged(summary: EvaluationSummary) -> None:
    """One stderr line on what the judge did (nothing without a judge)."""
    if summary.judge is not None:
        print(f"traceladder: {printable(summary.judge.line())}", file=sys.stderr, flush=True)
