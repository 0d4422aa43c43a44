"""The agent under test: the team's own agent code as the subject of a run.

`run --agent MODULE:FUNCTION` calls a Python callable per case (`python_agent`); `run --agent-cmd`
starts a process per case, in any language (`command_agent`). Either way traceladder opens the
case's root span, gives the agent the domain's tools (`call_tool`, executed in the domain's
sandbox as `execute_tool` spans; the same tools over MCP at the case's own URL, `mcp_tools`) and
keeps every span the agent's own instrumentation emits in the case's trace (`attribution`,
`run_server`); the ladder, reports, baselines and the gate then treat the run like any other.
The workflow itself: `traceladder.workflows.agent_run`.
"""
