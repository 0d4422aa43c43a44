"""`traceladder run`: parse the flags into a `RunRequest`, call `workflows.run.run`, print.
(`--agent` / `--agent-cmd`, the team's agent under test, are flags of the same request.)"""

from __future__ import annotations

import argparse
import sys

from traceladder.cli.common import db_path, terminal
from traceladder.cli.judge_options import say_judged
from traceladder.cli.run_options import add_run_options, run_request
from traceladder.errors import ExitCode, UserError
from traceladder.report.terminal import render_text
from traceladder.store.db import open_store


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


def handle(args: argparse.Namespace) -> int:
    # The run's modules import the OpenAI client library (~0.4 s): loaded only when a run starts,
    # so that `--help` and a refused flag answer fast.
    from traceladder.cli.progress import progress_for
    from traceladder.workflows.run import run

    request = run_request(args)
    path = db_path(args)
    with open_store(path) as store:
        result = run(store, request, progress_for=progress_for(stderr_is_terminal=sys.stderr.isatty()))
    if result.evaluation is not None:
        say_judged(result.evaluation)
    if result.report is not None:
        render_text(result.report, terminal())
    agent = result.agent
    if agent is not None and agent.dropped_spans:
        note = f"{agent.dropped_spans} span(s) the agent sent named no case of this run and were not kept"
        print(f"traceladder: {note}", file=sys.stderr)
    if agent is not None and agent.refused_bodies:
        note = f"{agent.refused_bodies} request(s) to the run's OTLP receiver were not OTLP; refused"
        print(f"traceladder: {note}", file=sys.stderr)
    summary = result.summary
    counts = f"cases={summary.finished}/{summary.total} agent_errors={summary.agent_errors}"
    print(f"status={summary.status} {counts}")
    print(f"run_id={summary.run_id}")
    if agent is not None:
        print(f"subject={agent.subject}")
        print(f"agent_version={agent.version}")
    print(f"db={path}")
    if result.report_path:
        print(f"report_path={result.report_path}")
    if result.nothing_measured:
        raise UserError(result.nothing_measured)
    return ExitCode.OK
