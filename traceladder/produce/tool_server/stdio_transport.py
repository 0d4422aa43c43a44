"""The MCP server over stdio: one process, one case (an agent process launches it per case)."""

from __future__ import annotations

import anyio
from mcp.server.stdio import stdio_server

from traceladder.produce.tool_server.cases import CaseTools
from traceladder.produce.tool_server.mcp_server import build_server
from traceladder.suite.domain.base import Domain


def serve_stdio(domain: Domain, case: CaseTools) -> None:
    """Serve `domain`'s tools for `case` on stdin/stdout until the client closes stdin."""
    server = build_server(domain, lambda ctx: case)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)


__all__ = ["serve_stdio"]
