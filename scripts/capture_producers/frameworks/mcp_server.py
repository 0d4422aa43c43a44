"""The MCP server of the `mcp` producer: the three tools on `mcp.server.mcpserver.MCPServer`, stdio.

    python mcp_server.py        # started by the client (frameworks/mcp_tools.py) as a subprocess

`MCPServer` is mcp 2.x's FastMCP (renamed). Its OpenTelemetry middleware (on by default) opens a
SERVER span per inbound request on the *global* tracer provider, parented by the W3C trace context
the client injects into `params._meta`. This process installs a Pipeline exporting to the same
capture sink and JSON-lines file as the client (CAPTURE_SINK_URL, CAPTURE_WORKDIR), with resource
`service.name=<client service>-server` (CAPTURE_SERVICE_NAME), and flushes when stdin closes —
before the client's stdio_client gives up waiting (2 s) and terminates it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from frameworks import TOOL_FUNCTIONS  # noqa: E402
from producers import Pipeline  # noqa: E402


def main() -> int:
    from mcp.server.mcpserver import MCPServer
    from opentelemetry import trace

    pipeline = Pipeline(
        sink_url=os.environ["CAPTURE_SINK_URL"],
        workdir=Path(os.environ["CAPTURE_WORKDIR"]),
        service_name=os.environ["CAPTURE_SERVICE_NAME"],
    )
    trace.set_tracer_provider(pipeline.make_tracer_provider())
    server = MCPServer("travel-tools")
    for fn in TOOL_FUNCTIONS:
        server.tool()(fn)
    try:
        server.run("stdio")
    finally:
        pipeline.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
