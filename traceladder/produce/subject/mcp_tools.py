"""The run's MCP tool server: the domain's tools over streamable HTTP for the agent under test.

When the optional `mcp` package is importable (`pip install 'traceladder[mcp]'`), an agent run
starts `produce.tool_server.http_transport` once, on 127.0.0.1, and hands each case run its own URL
(`TRACELADDER_MCP_URL` for a command, `case.mcp_url` for a Python agent). The URL's key is the
case run's key on the run server (`RunServer.tools_for`): a call through it executes in that case
run's `ToolBox` — its sandbox, its trace — exactly as `call_tool` does. A key that names no
running case (a case id, another run's key, a case that ended) is a 404: a URL is a capability
handed to one case run, so a call never lands in a case by guessing. Without the extra there is
no MCP server and no URL, and the run goes on (`call_tool` and `TRACELADDER_TOOLS_URL` remain).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from traceladder.produce.subject.run_server import RunServer
from traceladder.produce.tool_server.cases import CaseTools, LocalCase
from traceladder.suite.domain.base import Domain

McpUrl = Callable[[str], str]  # a case run's key → its MCP URL


@contextmanager
def mcp_tools(domain: Domain, server: RunServer) -> Iterator[McpUrl | None]:
    """Serve `domain`'s tools over MCP for the case runs `server` knows, until the block ends
    (normally, on an error or on Ctrl-C); yields `url_for(key)`, or None without the extra."""
    try:
        from traceladder.produce.tool_server import http_transport
    except ImportError:  # the extra is not installed: no MCP URL, by design not an error
        yield None
        return

    def case_tools(key: str) -> CaseTools | None:
        toolbox = server.toolbox(key)
        # No default parent: the toolbox places a call from outside the case's trace under the
        # case's root span, and one whose `_meta` traceparent is in the case's trace under it.
        return LocalCase(toolbox) if toolbox is not None else None

    with http_transport.start(domain, case_tools) as tools:
        yield tools.url_for
