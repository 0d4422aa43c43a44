"""`traceladder tools serve`: a domain's tools as an MCP server (stdio or streamable HTTP)."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING

from traceladder.cli.common import add_db_option, add_domain_option, db_path, domain_name, int_range
from traceladder.errors import ExitCode, UserError

if TYPE_CHECKING:
    from traceladder.produce.tool_server.standalone import StandaloneCases
    from traceladder.suite.domain.base import Domain

CASE_ENV, TOOLS_URL_ENV, TRACEPARENT_ENV = "TRACELADDER_CASE_ID", "TRACELADDER_TOOLS_URL", "TRACEPARENT"


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("tools", help="a domain's tools as an MCP server, for any agent framework")
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    serve = actions.add_parser(
        "serve",
        help="serve the domain's tools over MCP (stdio or streamable HTTP on 127.0.0.1)",
        description="Expose a domain's tools (retail, or a declarative domain folder's replay) as an MCP "
        "server (needs `pip install 'traceladder[mcp]'`). Every call executes in the case's sandbox "
        "through the built-in loop's own code and is an execute_tool span (arguments and result) in "
        "the case's trace. stdio: one case per process, named by $TRACELADDER_CASE_ID (or --case), "
        "joining $TRACEPARENT; inside a `run --agent-cmd` case ($TRACELADDER_TOOLS_URL set) each call "
        "executes in the run's own sandbox for the case. http: one URL per case, "
        "http://127.0.0.1:PORT/cases/CASE_ID/mcp (the first stdout line names it); Ctrl-C stops it. "
        "Outside a run, spans go to --db. A bad call (unknown tool, arguments that are not a JSON "
        "object) is a tool error result. See docs/your-own-agent.md.",
    )
    add_domain_option(serve)
    add_db_option(serve)
    serve.add_argument("--transport", choices=("stdio", "http"), default="stdio", help="default: stdio")
    serve.add_argument("--port", type=int_range(0, 65535), default=0, metavar="N",
                       help="http: the port on 127.0.0.1 (default 0: any free port)")  # fmt: skip
    serve.add_argument("--case", metavar="ID", default=None,
                       help=f"stdio: the case (default ${CASE_ENV})")  # fmt: skip
    serve.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from traceladder.extras import require

    require("mcp", "traceladder tools serve")
    from traceladder.suite.domain.registry import load_domain

    domain = load_domain(domain_name(args))
    if args.transport == "stdio":
        return _stdio(args, domain)
    return _http(args, domain)


def _stdio(args: argparse.Namespace, domain: Domain) -> int:
    from traceladder.produce.tool_server.cases import ForwardedCase
    from traceladder.produce.tool_server.stdio_transport import serve_stdio

    case_id = args.case or os.environ.get(CASE_ENV)
    if not case_id:
        raise UserError(f"stdio serves one case: set ${CASE_ENV} or pass --case ID")
    tools_url = os.environ.get(TOOLS_URL_ENV)
    if tools_url:  # inside a run's case: the run's sandbox and toolbox execute and record the call
        serve_stdio(domain, ForwardedCase(tools_url))
        return ExitCode.OK
    with _standalone(args, domain, os.environ.get(TRACEPARENT_ENV)) as cases:
        case = cases(case_id)
        assert case is not None
        serve_stdio(domain, case)
    return ExitCode.OK


def _http(args: argparse.Namespace, domain: Domain) -> int:
    from traceladder.produce.tool_server.http_transport import start

    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        with _standalone(args, domain, None) as cases, start(domain, cases, port=args.port) as server:
            print(f"mcp={server.url}/cases/{{case_id}}/mcp", flush=True)
            print(f"traceladder tools: serving {domain.name} on {server.url}", file=sys.stderr, flush=True)
            stop.wait()
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    return ExitCode.OK


@contextmanager
def _standalone(
    args: argparse.Namespace, domain: Domain, traceparent: str | None
) -> Iterator[StandaloneCases]:
    """Cases with sandboxes of their own, their spans written to --db (and to OTLP when the
    standard variables say so), flushed and the store closed on the way out."""
    from traceladder.instrumentation.tracing import TRACER_NAME, make_tracer_provider
    from traceladder.produce.tool_server.standalone import StandaloneCases, parent_from_traceparent
    from traceladder.store.db import open_store
    from traceladder.store.exporter import DuckDBSpanExporter

    parent = parent_from_traceparent(traceparent)
    with open_store(db_path(args)) as store:
        provider = make_tracer_provider(DuckDBSpanExporter(store))
        cases = StandaloneCases(domain, provider.get_tracer(TRACER_NAME), parent)
        try:
            yield cases
        finally:
            cases.close()
            provider.force_flush()
            provider.shutdown()
