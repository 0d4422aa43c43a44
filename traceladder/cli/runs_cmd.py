"""`traceladder runs add --where PREDICATE`: traces already tagged with case ids become a run."""

from __future__ import annotations

import argparse

from traceladder.cli.common import (
    add_db_option,
    add_domain_option,
    add_rungs_option,
    db_path,
    domain_name,
    ladder_for,
)
from traceladder.cli.judge_options import add_judge_options, judge_options, say_judged
from traceladder.errors import ExitCode
from traceladder.store.db import open_store


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("runs", help="make runs of traces already in the store")
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    add = actions.add_parser(
        "add",
        help="record the traces a predicate selects, tagged with traceladder.case.id, as a run",
        description="Record the traces a SQL predicate over the traces table selects — those whose root "
        "span names a case (traceladder.case.id) — as one complete run of the domain's suite, and judge "
        "it: then report, consistency, baseline lock, gate and compare read it like any run. A case's "
        "traces are its repeats, oldest first. Subject: traces:SERVICE (or --subject); version: the "
        "traces' service.version (or --agent-version). Exit 2, nothing written, when no tagged trace "
        "matches, a trace already belongs to a run, a case id is not in the suite, or the traces come "
        "from several versions.",
    )
    add.add_argument("--where", required=True, metavar="SQL", help="predicate over the traces table, e.g. "
                     "\"service_version = '1.4'\"")  # fmt: skip
    add.add_argument("--subject", metavar="NAME", help="what the run tested (default: traces:SERVICE)")
    add.add_argument(
        "--agent-version", metavar="V", help="its version (default: the traces' service.version)"
    )
    add_db_option(add)
    add_domain_option(add)
    add_rungs_option(add)
    add_judge_options(add)
    add.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from traceladder.workflows.runs_add import TraceRunRequest, add_trace_run

    request = TraceRunRequest(
        where=args.where, domain=domain_name(args), subject=args.subject, version=args.agent_version,
        ladder=ladder_for(args), judge=judge_options(args, simulated=False),
    )  # fmt: skip
    path = db_path(args)
    with open_store(path) as store:
        result = add_trace_run(store, request)
    say_judged(result.evaluation)
    print(f"recorded {result.traces} trace(s) of {result.cases} case(s) as run {result.run_id}")
    print(f"run_id={result.run_id}")
    print(f"subject={result.subject}")
    print(f"agent_version={result.version}")
    print(f"db={path}")
    return ExitCode.OK
