"""`run --agent MODULE:FUNCTION` / `run --agent-cmd CMD`: the flags, and the handler that parses
them into an `AgentRunRequest`, calls `workflows.agent_run.run_agent` and prints the result."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from traceladder.cli.common import db_path, domain_name, ladder_for, terminal
from traceladder.cli.judge_options import judge_options, say_judged
from traceladder.errors import ExitCode, UserError
from traceladder.produce.agent.config import DEFAULT_MAX_TOKENS
from traceladder.report.terminal import render_text
from traceladder.store.db import Store, open_store

if TYPE_CHECKING:
    from traceladder.workflows.agent_run import AgentRunRequest

# Built-in loop flags an agent under test does not use (it has its own loop): refused when given.
_LOOP_FLAGS = {
    "max_steps": ("--max-steps", 8), "request_timeout": ("--request-timeout", 60.0),
    "max_tokens": ("--max-tokens", None), "token_param": ("--token-param", "auto"),
    "retry_attempts": ("--retry-attempts", 4), "retry_base_delay": ("--retry-base-delay", 0.5),
    "stop_after_errors": ("--stop-after-errors", 5),
}  # fmt: skip


def add_user_model_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--user-model",
        metavar="M",
        help="the model that plays the user of cases giving a user goal: sim:user (built in, no key) "
        "or an OpenAI-compatible model, reached like --model (docs/conversations.md)",
    )


def add_agent_options(p: argparse.ArgumentParser) -> None:
    add_user_model_option(p)
    group = p.add_argument_group("your agent under test (instead of the built-in loop)")
    group.add_argument(
        "--agent",
        metavar="MODULE:FUNCTION",
        help="call this Python function once per case with the case (id, messages, tools, system "
        "prompt, model, call_tool); sync or async; its return value is the answer",
    )
    group.add_argument(
        "--agent-cmd",
        metavar="CMD",
        help="start this command once per case: the case as JSON on stdin, OTLP endpoint and case ids in "
        "its environment; stdout is the answer, a non-zero exit is AGENT_ERROR",
    )
    group.add_argument(
        "--agent-version",
        metavar="V",
        help="the agent's version as recorded (default: the git commit of its working tree)",
    )


def wants_agent(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "agent", None) or getattr(args, "agent_cmd", None))


def agent_request(args: argparse.Namespace) -> AgentRunRequest:
    """The `AgentRunRequest` the flags of `run` (or `baseline init`, which has no --repeat,
    --resume or --no-report) ask for; `UserError` for a flag of the built-in loop."""
    from traceladder.produce.agent.client import choose_model
    from traceladder.produce.agent.sim import is_sim
    from traceladder.workflows.agent_run import AgentRunRequest

    for dest, (flag, default) in _LOOP_FLAGS.items():
        if getattr(args, dest) != (DEFAULT_MAX_TOKENS if dest == "max_tokens" else default):
            raise UserError(f"{flag} sets the built-in loop; an agent under test runs its own — drop it")
    resume = getattr(args, "resume", None)  # `baseline init` has neither: its runs are new and judged
    no_report = getattr(args, "no_report", False)
    # The model the agent talks to decides the default judge, as for the built-in loop's model
    # (a resumed run's: the one it recorded).
    if resume:
        from traceladder.workflows.agent_run import recorded_agent_model

        with open_store(db_path(args)) as store:
            model = recorded_agent_model(store, resume) or ""
    else:
        model = choose_model(args.model, args.base_url).model
    judge = None if no_report else judge_options(args, simulated=is_sim(model))
    return AgentRunRequest(
        domain=domain_name(args), agent=args.agent, agent_cmd=args.agent_cmd,
        agent_version=args.agent_version,
        model=args.model, base_url=args.base_url, cases_path=args.cases, system_prompt=args.system_prompt,
        case_ids=tuple(args.case), dimensions=tuple(args.dimension),
        repeat=getattr(args, "repeat", None) or 1,
        concurrency=args.concurrency, timeout_s=args.timeout, seed=args.seed, resume=resume,
        evaluate=not no_report, ladder=ladder_for(args), judge=judge, user_model=args.user_model,
    )  # fmt: skip


def prepare_agent_runs(store: Store, args: argparse.Namespace) -> Callable[[int], str]:
    """`baseline init --agent/--agent-cmd`: a function that runs and evaluates run `i` of the
    agent under test, as `run --agent` with the same flags would, and returns its id. A run
    that did not complete, or in which every case was an AGENT_ERROR, is a `UserError`: no
    baseline rests on it."""
    from traceladder.cli.progress import RunProgress
    from traceladder.workflows.agent_run import run_agent

    request = agent_request(args)  # resolved once: a bad flag fails before any run
    ladder = ladder_for(args)

    def execute(i: int) -> str:
        progress = RunProgress(
            store, domain=request.domain, cases_path=args.cases, ladder=ladder, evaluated=True,
            judge_after=request.judge is not None,
        )  # fmt: skip
        result = run_agent(store, request, progress=progress, on_start=progress.start)
        summary = result.summary
        if summary.status != "complete":
            raise UserError(
                f"run {summary.run_id} ended {summary.status}; a baseline needs complete runs — finish it "
                f"with `traceladder run --resume {summary.run_id}` or start `baseline init` again"
            )
        if summary.finished and summary.agent_errors == summary.finished:
            raise UserError(
                f"every case of run {summary.run_id} ended as AGENT_ERROR, so nothing was measured; see "
                f"`traceladder report {summary.run_id}`"
            )
        if result.evaluation is not None:
            say_judged(result.evaluation)
        print(f"traceladder: run {i + 1}: {summary.run_id} evaluated", file=sys.stderr, flush=True)
        return summary.run_id

    return execute


def handle_agent(args: argparse.Namespace) -> int:
    """`run` with an agent under test (or `run --resume` of such a run)."""
    from traceladder.cli.progress import RunProgress
    from traceladder.workflows.agent_run import run_agent

    request = agent_request(args)
    ladder, judge = ladder_for(args), request.judge
    path = db_path(args)
    with open_store(path) as store:
        progress = RunProgress(
            store, domain=request.domain, cases_path=args.cases, ladder=ladder, evaluated=not args.no_report,
            judge_after=judge is not None,
        )  # fmt: skip
        result = run_agent(store, request, progress=progress, on_start=progress.start)
        if result.evaluation is not None:
            say_judged(result.evaluation)
        if result.report is not None:
            render_text(result.report, terminal())
        notes = []
        if result.dropped_spans:
            notes.append(
                f"{result.dropped_spans} span(s) the agent sent named no case of this run and were not kept"
            )
        if result.refused_bodies:
            notes.append(
                f"{result.refused_bodies} request(s) to the run's OTLP receiver were not OTLP; refused"
            )
        for note in notes:
            print(f"traceladder: {note}", file=sys.stderr)
        summary = result.summary
        print(
            f"status={summary.status} cases={summary.finished}/{summary.total} "
            f"agent_errors={summary.agent_errors}"
        )
        print(f"run_id={summary.run_id}")
        print(f"subject={result.subject}")
        print(f"agent_version={result.version}")
        print(f"db={path}")
        if result.report_path:
            print(f"report_path={result.report_path}")
    return ExitCode.OK
