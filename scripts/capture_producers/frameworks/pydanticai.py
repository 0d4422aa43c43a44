"""pydantic-ai with its native OpenTelemetry instrumentation (no logfire).

`Agent(..., capabilities=[Instrumentation(settings=InstrumentationSettings(tracer_provider=<pipeline's>,
include_content=True))])` (2.x has no `instrument=` argument any more)
with the default data-format version (`DEFAULT_INSTRUMENTATION_VERSION`, 5 in pydantic-ai-slim
2.68.0). The model is `OpenAIChatModel` (chat completions) on an `OpenAIProvider` whose
`AsyncOpenAI` client points at the scripted server with `max_retries=0`.
Streaming: `agent.run_stream(...)` (every model request of the run is streamed; the run ends at
the first text output, which is the script's last turn).
"""

from __future__ import annotations

import asyncio

from frameworks import (
    AGENT_NAME,
    API_KEY,
    MODEL,
    SYSTEM_PROMPT,
    TOOL_FUNCTIONS,
    FrameworkConfig,
    FrameworkRun,
)


def _run(pipeline, base_url: str, user_text: str, streaming: bool) -> FrameworkRun:
    from openai import AsyncOpenAI
    from pydantic_ai import Agent, InstrumentationSettings
    from pydantic_ai.capabilities import Instrumentation
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    tracer_provider = pipeline.make_tracer_provider()
    client = AsyncOpenAI(base_url=base_url, api_key=API_KEY, max_retries=0)
    model = OpenAIChatModel(MODEL, provider=OpenAIProvider(openai_client=client))
    agent = Agent(
        model,
        name=AGENT_NAME,
        system_prompt=SYSTEM_PROMPT,
        tools=TOOL_FUNCTIONS,
        capabilities=[
            Instrumentation(
                settings=InstrumentationSettings(tracer_provider=tracer_provider, include_content=True)
            )
        ],
    )

    async def main() -> str:
        if streaming:
            async with agent.run_stream(user_text) as result:
                return await result.get_output()
        return (await agent.run(user_text)).output

    return FrameworkRun(asyncio.run(main()))


CONFIG = FrameworkConfig(
    name="pydantic-ai",
    framework="pydantic-ai",
    description="pydantic-ai Agent on OpenAIChatModel (chat completions), native OTel instrumentation "
    "(InstrumentationSettings, default version, include_content=True) on the pipeline's TracerProvider",
    env={},
    packages=[
        "pydantic-ai-slim",
        "pydantic-graph",
        "pydantic",
        "openai",
        "opentelemetry-api",
        "opentelemetry-sdk",
        "opentelemetry-exporter-otlp-proto-http",
        "opentelemetry-exporter-otlp-json-http",
    ],
    run=_run,
    notes=[
        "content capture: InstrumentationSettings(include_content=True) (also the default); "
        "data format version left at the default (DEFAULT_INSTRUMENTATION_VERSION=5)",
        "streaming mode: agent.run_stream(user_text) + get_output(); plain mode: agent.run(user_text)",
        "model client: AsyncOpenAI(base_url=<scripted server>, max_retries=0) "
        "passed as OpenAIProvider(openai_client=...)",
    ],
)
