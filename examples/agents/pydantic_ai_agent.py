"""A pydantic-ai agent: `traceladder run --agent examples/agents/pydantic_ai_agent.py:run`.

The domain's tools become pydantic-ai tools from their JSON schemas; each executes through
`case.call_tool`. `Agent.instrument_all()` makes pydantic-ai emit its own OpenTelemetry spans,
which traceladder keeps in the case's trace. Needs `pip install "pydantic-ai-slim[openai]"`.
"""

from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.tools import Tool

Agent.instrument_all()  # pydantic-ai's own spans, through the global tracer provider


def _tool(case, spec):
    function = spec["function"]

    def call(**arguments):
        return case.call_tool(function["name"], arguments)

    return Tool.from_schema(
        call, name=function["name"], description=function.get("description", ""),
        json_schema=function.get("parameters") or {"type": "object", "properties": {}},
    )  # fmt: skip


async def run(case):
    provider = OpenAIProvider(base_url=case.base_url, api_key=case.api_key or "unused")
    agent = Agent(
        OpenAIChatModel(case.model, provider=provider), system_prompt=case.system_prompt,
        tools=[_tool(case, spec) for spec in case.tools],
    )  # fmt: skip
    result = await agent.run(case.instruction)
    return result.output
