"""A domain's tools as an MCP server (`traceladder tools serve`), for any agent framework.

Every call executes through `produce.subject.toolbox.ToolBox` → `produce.agent.tool_execution` — the built-in
loop's own path — so it is an `execute_tool` span (arguments and result captured) in the calling
case's trace. Which case a call belongs to:

* **HTTP** (streamable HTTP on 127.0.0.1): one URL per case, `/cases/{case_id}/mcp`. A run starts
  the server with `start(domain, cases)`, where `cases(case_id)` gives the case's `CaseTools`
  (its sandbox and parent span, through a `ToolBox`), and hands each case `url_for(case_id)`.
* **stdio**: one process per case; the case is the environment's `TRACELADDER_CASE_ID`, its
  parent span `TRACEPARENT` (what `run --agent-cmd` sets for the agent process that launches
  the server).

A W3C `traceparent` in the request's `_meta` (MCP's trace propagation, sent by OpenTelemetry-
instrumented clients) is the parent when present. Needs the `mcp` extra: `pip install
'traceladder[mcp]'`. See docs/your-own-agent.md.
"""

from traceladder.produce.tool_server.cases import CaseTools, ForwardedCase, LocalCase

__all__ = ["CaseTools", "ForwardedCase", "LocalCase"]
