"""The MCP server over streamable HTTP on 127.0.0.1: one URL per case, `/cases/{case_id}/mcp`.

`start(domain, cases)` serves in a thread of this process (uvicorn) and returns a `ToolServer`:
`url_for(case_id)` is what a case's agent mounts; `cases(case_id)` gives that case's `CaseTools`
(None: unknown, and the URL answers 404). Stateless JSON responses: each request stands alone,
so a case's URL works from any client, in any order, across the agent's reconnects.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import uvicorn
from mcp.server import ServerRequestContext
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from traceladder.errors import UserError
from traceladder.produce.tool_server.cases import CaseTools
from traceladder.produce.tool_server.mcp_server import build_server
from traceladder.suite.domain.base import Domain

HOST = "127.0.0.1"
START_TIMEOUT_S = 10.0


class ToolServer:
    """A running MCP tool server; `close()` (or the `with` block's end) stops it."""

    def __init__(self, server: uvicorn.Server, thread: threading.Thread, port: int) -> None:
        self._server, self._thread, self.port = server, thread, port

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def url_for(self, case_id: str) -> str:
        """The streamable-HTTP MCP endpoint of one case."""
        return f"{self.url}/cases/{quote(case_id, safe='')}/mcp"

    def close(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)

    def __enter__(self) -> ToolServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def start(domain: Domain, cases: Callable[[str], CaseTools | None], *, port: int = 0) -> ToolServer:
    """Serve `domain`'s tools on 127.0.0.1:`port` (0: any free port) until `close()`.
    `UserError` when the port cannot be bound."""

    def resolve(ctx: ServerRequestContext[Any, Any]) -> CaseTools | None:
        request = ctx.request
        case_id = request.path_params.get("case_id") if isinstance(request, Request) else None
        return cases(case_id) if case_id else None

    server = build_server(domain, resolve)
    app = server.streamable_http_app(stateless_http=True, json_response=True, host=HOST)
    mcp_endpoint = next(r for r in app.routes if isinstance(r, Route) and r.path == "/mcp").app

    app.router.routes[:] = [Route("/cases/{case_id}/mcp", endpoint=_PerCase(cases, mcp_endpoint))]
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        raise UserError(f"cannot listen on {HOST}:{port}: {exc.strerror or exc}") from None
    config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False)
    uv = uvicorn.Server(config)
    thread = threading.Thread(target=uv.run, kwargs={"sockets": [sock]}, name="traceladder-mcp", daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT_S
    while not uv.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    if not uv.started:
        uv.should_exit = True
        raise UserError("the MCP tool server did not start")
    return ToolServer(uv, thread, sock.getsockname()[1])


class _PerCase:
    """The MCP endpoint behind a case check: an unknown case is a 404, never an MCP session.
    (A class, not a function: Starlette calls a function endpoint with a Request.)"""

    def __init__(self, cases: Callable[[str], CaseTools | None], endpoint: Any) -> None:
        self._cases, self._endpoint = cases, endpoint

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        case_id = scope.get("path_params", {}).get("case_id", "")
        if self._cases(case_id) is None:
            response = JSONResponse({"error": f"no case {case_id!r} on this server"}, status_code=404)
            await response(scope, receive, send)
            return
        await self._endpoint(scope, receive, send)
