"""Where a run's spans are produced: our agent loop and suite runner (`agent/`), the team's own
agent as a run's subject (`subject/`), and a domain's tools served over MCP (`tool_server/`)."""
