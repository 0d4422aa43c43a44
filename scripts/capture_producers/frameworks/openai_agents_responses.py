"""OpenAI Agents SDK on its default model, the **Responses API** (`OpenAIResponsesModel`), on the
scripted server's `/v1/responses` (responses_api.py), under the same two instrumentations as
openai_agents.py:
  * `responses-openinference` — `openinference-instrumentation-openai-agents`;
  * `responses-otel` — `opentelemetry-instrumentation-openai-agents-v2`.

Same agent, tools, client (`AsyncOpenAI`, `max_retries=0`) and processor set-up as
openai_agents.py; only the model class differs (what `Agent(model="gpt-4o-mini")` resolves to when
no provider is configured).
"""

from __future__ import annotations

from typing import Any

from frameworks import AGENT_NAME, API_KEY, MODEL, SYSTEM_PROMPT, TOOL_FUNCTIONS, FrameworkConfig, FrameworkRun
from frameworks.openai_agents import CONFIGS as CHAT_CONFIGS
from frameworks.openai_agents import SDK_ENV


def _run_agent(base_url: str, user_text: str, streaming: bool) -> FrameworkRun:
    import asyncio

    from agents import Agent, OpenAIResponsesModel, RunConfig, Runner, function_tool
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=base_url, api_key=API_KEY, max_retries=0)
    agent = Agent(
        name=AGENT_NAME,
        instructions=SYSTEM_PROMPT,
        model=OpenAIResponsesModel(model=MODEL, openai_client=client),
        tools=[function_tool(f) for f in TOOL_FUNCTIONS],
    )
    run_config = RunConfig(trace_include_sensitive_data=True)

    async def main() -> FrameworkRun:
        try:
            if streaming:
                result = Runner.run_streamed(agent, user_text, run_config=run_config)
                async for _event in result.stream_events():
                    pass
            else:
                result = await Runner.run(agent, user_text, run_config=run_config)
            final = result.final_output
            return FrameworkRun(final if isinstance(final, str) else repr(final))
        finally:
            await client.close()

    return asyncio.run(main())


def _run_openinference(pipeline: Any, base_url: str, user_text: str, streaming: bool) -> FrameworkRun:
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    OpenAIAgentsInstrumentor().instrument(tracer_provider=pipeline.make_tracer_provider())
    return _run_agent(base_url, user_text, streaming)


def _run_otel(pipeline: Any, base_url: str, user_text: str, streaming: bool) -> FrameworkRun:
    from agents import set_trace_processors
    from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    tp = pipeline.make_tracer_provider()
    set_trace_processors([])  # as in openai_agents.py: drop the SDK's OpenAI-backend exporter
    OpenAIAgentsInstrumentor().instrument(tracer_provider=tp)
    return _run_agent(base_url, user_text, streaming)


_CHAT = {c.name: c for c in CHAT_CONFIGS}
CONFIGS = [
    FrameworkConfig(
        name="responses-openinference",
        framework="openai-agents",
        description="OpenAI Agents SDK on the Responses API (OpenAIResponsesModel) traced by "
        "openinference-instrumentation-openai-agents (OpenInferenceTracingProcessor)",
        env={**SDK_ENV},
        packages=_CHAT["openai-agents-openinference"].packages,
        run=_run_openinference,
        notes=_CHAT["openai-agents-openinference"].notes,
    ),
    FrameworkConfig(
        name="responses-otel",
        framework="openai-agents",
        description="OpenAI Agents SDK on the Responses API (OpenAIResponsesModel) traced by "
        "opentelemetry-instrumentation-openai-agents-v2 (GenAISemanticProcessor, OpenTelemetry contrib)",
        env=_CHAT["openai-agents-otel"].env,
        packages=[*_CHAT["openai-agents-otel"].packages],
        run=_run_otel,
        notes=_CHAT["openai-agents-otel"].notes,
    ),
]
