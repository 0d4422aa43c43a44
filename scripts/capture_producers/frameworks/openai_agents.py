"""OpenAI Agents SDK (`openai-agents`) on the scripted chat-completions server.

Two producers on the same agent:
  * `openai-agents-openinference` — `openinference-instrumentation-openai-agents`
    (`OpenAIAgentsInstrumentor().instrument(tracer_provider=...)`): a TracingProcessor that turns
    the SDK's own trace/spans into OpenTelemetry spans.
  * `openai-agents-otel` — `opentelemetry-instrumentation-openai-agents-v2` (OpenTelemetry
    contrib), also a TracingProcessor, with content capture on.

The model is `OpenAIChatCompletionsModel` (never the Responses API) on an `AsyncOpenAI` client with
`max_retries=0`. Both instrumentors install their processor *exclusively* by default
(`set_trace_processors([...])`), which removes the SDK's default processor that would export to
OpenAI's tracing backend, so the SDK's tracing stays enabled (`set_tracing_disabled(True)` would
stop every processor, the instrumentation's too) and nothing leaves 127.0.0.1.
"""

from __future__ import annotations

from typing import Any

from frameworks import (
    AGENT_NAME,
    API_KEY,
    MODEL,
    SYSTEM_PROMPT,
    TOOL_FUNCTIONS,
    FrameworkConfig,
    FrameworkRun,
)

# The SDK's own switch for putting inputs/outputs (messages, tool arguments, results) on its
# spans; "true" is its default, set explicitly (RunConfig(trace_include_sensitive_data=True) too).
SDK_ENV = {"OPENAI_AGENTS_TRACE_INCLUDE_SENSITIVE_DATA": "true"}


def _run_agent(base_url: str, user_text: str, streaming: bool) -> FrameworkRun:
    import asyncio

    from agents import Agent, OpenAIChatCompletionsModel, RunConfig, Runner, function_tool
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=base_url, api_key=API_KEY, max_retries=0)
    agent = Agent(
        name=AGENT_NAME,
        instructions=SYSTEM_PROMPT,
        model=OpenAIChatCompletionsModel(model=MODEL, openai_client=client),
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

    tp = pipeline.make_tracer_provider()
    # exclusive_processor=True (the default): replaces the SDK's OpenAI-backend exporter.
    OpenAIAgentsInstrumentor().instrument(tracer_provider=tp)
    return _run_agent(base_url, user_text, streaming)


def _run_otel(pipeline: Any, base_url: str, user_text: str, streaming: bool) -> FrameworkRun:
    from agents import set_trace_processors
    from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    tp = pipeline.make_tracer_provider()
    # This instrumentor *appends* its processor to the registered ones, so the SDK's default
    # processor (export to OpenAI's tracing backend) is removed first; tracing stays enabled.
    set_trace_processors([])
    OpenAIAgentsInstrumentor().instrument(tracer_provider=tp)
    return _run_agent(base_url, user_text, streaming)


_AGENTS_PKGS = ["openai-agents", "openai", "opentelemetry-api", "opentelemetry-sdk"]

CONFIGS = [
    FrameworkConfig(
        name="openai-agents-openinference",
        framework="openai-agents",
        description="OpenAI Agents SDK (OpenAIChatCompletionsModel) traced by "
        "openinference-instrumentation-openai-agents (OpenInferenceTracingProcessor)",
        env={**SDK_ENV},
        packages=[
            "openinference-instrumentation-openai-agents",
            "openinference-instrumentation",
            "openinference-semantic-conventions",
            *_AGENTS_PKGS,
        ],
        run=_run_openinference,
        notes=[
            "content capture: OpenInference records inputs/outputs by default (TraceConfig()); the SDK "
            "puts them on its spans because trace_include_sensitive_data is true "
            "(OPENAI_AGENTS_TRACE_INCLUDE_SENSITIVE_DATA=true and RunConfig(trace_include_sensitive_data=True))",
            "the instrumentor's processor is exclusive (default): the SDK's OpenAI-backend trace exporter "
            "is replaced, tracing itself stays enabled",
        ],
    ),
    FrameworkConfig(
        name="openai-agents-otel",
        framework="openai-agents",
        description="OpenAI Agents SDK (OpenAIChatCompletionsModel) traced by "
        "opentelemetry-instrumentation-openai-agents-v2 (GenAISemanticProcessor, OpenTelemetry contrib)",
        env={**SDK_ENV, "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_and_event"},
        packages=[
            "opentelemetry-instrumentation-openai-agents-v2",
            "opentelemetry-util-genai",
            "opentelemetry-instrumentation",
            "opentelemetry-semantic-conventions",
            *_AGENTS_PKGS,
        ],
        run=_run_otel,
        notes=[
            "content capture: OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_and_event (read by the "
            "instrumentor at instrument(); unset also means span_and_event; the processor never emits "
            "events, so span_only gives the same spans); OTEL_SEMCONV_STABILITY_OPT_IN is not read by "
            "this package; plus the SDK's trace_include_sensitive_data=true",
            "the instrumentor appends its processor, so set_trace_processors([]) removes the SDK's "
            "OpenAI-backend exporter first; tracing itself stays enabled",
            "instrument() got no base_url/server_address: server.address/port are the package defaults",
        ],
    ),
]
