"""AutoGen AgentChat (`autogen-agentchat` + `autogen-ext[openai]` 0.7): an `AssistantAgent` with the
three tools on `OpenAIChatCompletionClient` (base_url at the scripted chat-completions server),
traced by AutoGen's own OpenTelemetry spans (autogen-core `trace_create_agent_span`,
`trace_invoke_agent_span`, `trace_tool_span`, on the global tracer provider).

`max_tool_iterations=8` lets the agent loop (call the model again after each tool round) until a
text answer, as the scenarios need; streaming is `model_client_stream=True`. Nothing instruments the
model client: AutoGen's spans are the whole trace, as a team gets it from AutoGen alone.
"""

from __future__ import annotations

from typing import Any

from frameworks import AGENT_NAME, API_KEY, MODEL, SYSTEM_PROMPT, TOOL_FUNCTIONS, FrameworkConfig, FrameworkRun


def _run(pipeline: Any, base_url: str, user_text: str, streaming: bool) -> FrameworkRun:
    import asyncio

    from opentelemetry import trace

    trace.set_tracer_provider(pipeline.make_tracer_provider())  # AutoGen traces on the global one

    from autogen_agentchat.agents import AssistantAgent
    from autogen_agentchat.messages import TextMessage
    from autogen_core.models import ModelInfo
    from autogen_ext.models.openai import OpenAIChatCompletionClient

    client = OpenAIChatCompletionClient(
        model=MODEL,
        base_url=base_url,
        api_key=API_KEY,
        max_retries=0,
        model_info=ModelInfo(vision=False, function_calling=True, json_output=True, family="gpt-4o",
                             structured_output=True, multiple_system_messages=True),  # fmt: skip
    )
    agent = AssistantAgent(
        name=AGENT_NAME.replace("-", "_"),  # AutoGen names must be identifiers
        model_client=client,
        tools=list(TOOL_FUNCTIONS),
        system_message=SYSTEM_PROMPT,
        model_client_stream=streaming,
        max_tool_iterations=8,
    )

    async def go() -> Any:
        try:
            return await agent.run(task=user_text)
        finally:
            await client.close()

    result = asyncio.run(go())
    last = result.messages[-1] if result.messages else None
    if isinstance(last, TextMessage):
        return FrameworkRun(last.content)
    return FrameworkRun(None, f"stopped on {type(last).__name__}: {getattr(last, 'content', None)!r}"[:300])


CONFIG = FrameworkConfig(
    name="autogen",
    framework="autogen",
    description="AutoGen AgentChat AssistantAgent (max_tool_iterations=8) on OpenAIChatCompletionClient, "
    "traced by AutoGen's own OpenTelemetry spans",
    env={},
    packages=["autogen-agentchat", "autogen-core", "autogen-ext", "openai", "opentelemetry-api", "opentelemetry-sdk"],
    run=_run,
    notes=[
        "AutoGen's spans carry no message content: execute_tool spans have the tool name and call id, "
        "never the arguments or the result; nothing records the model's requests",
    ],
)
