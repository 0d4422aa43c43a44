"""`traceladder explain TRACE_ID`: which convention read which span of a stored trace, what each
call came from, and what no convention read."""

from __future__ import annotations

import argparse

from traceladder.cli.common import add_db_option, db_path
from traceladder.errors import ExitCode


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "explain",
        help="show how a stored trace was read: conventions per span, calls, unread tool activity",
        description="Read one stored trace again with the store's conventions and print which "
        "convention claimed which span, each call with where it came from, the tool definitions, "
        "and the tool activity no convention read — the reason a trace is not_evaluated. Paste "
        "the output into an issue to report a shape traceladder does not read.",
    )
    add_db_option(p)
    p.add_argument("trace_id", metavar="TRACE_ID", help="the trace's id (32 hex digits)")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from traceladder.workflows.explain import explain_trace

    print(explain_trace(db_path(args), args.trace_id))
    return ExitCode.OK
