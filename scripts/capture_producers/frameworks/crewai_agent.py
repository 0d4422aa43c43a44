"""CrewAI: one agent, one task, the three tools, on CrewAI's native OpenAI provider (chat
completions), traced by openinference-instrumentation-crewai plus openinference-instrumentation-openai
(CrewAI 1.x calls the `openai` SDK itself, not LiteLLM, for "openai/..." models)."""

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


def _run(pipeline: Any, base_url: str, user_text: str, streaming: bool) -> FrameworkRun:
    from openinference.instrumentation.crewai import CrewAIInstrumentor
    from openinference.instrumentation.openai import OpenAIInstrumentor

    tp = pipeline.make_tracer_provider()
    CrewAIInstrumentor().instrument(tracer_provider=tp)
    OpenAIInstrumentor().instrument(tracer_provider=tp)

    from crewai import LLM, Agent, Crew, Task
    from crewai.tools import tool

    llm = LLM(model=f"openai/{MODEL}", base_url=base_url, api_key=API_KEY, max_retries=0, stream=streaming)
    agent = Agent(
        role=AGENT_NAME,
        goal="Answer the user's travel request.",
        backstory=SYSTEM_PROMPT,
        tools=[tool(fn) for fn in TOOL_FUNCTIONS],
        llm=llm,
        allow_delegation=False,
        max_retry_limit=0,
        verbose=False,
    )
    task = Task(description=user_text, expected_output="A short answer for the user.", agent=agent)
    crew = Crew(agents=[agent], tasks=[task], verbose=False, tracing=False)
    output = crew.kickoff()
    return FrameworkRun(str(output.raw) if output is not None else None)


CONFIG = FrameworkConfig(
    name="crewai",
    framework="crewai",
    description="CrewAI (one agent, one task) on LLM('openai/gpt-4o-mini', base_url=...), traced by "
    "openinference-instrumentation-crewai + openinference-instrumentation-openai",
    env={
        "CREWAI_DISABLE_TELEMETRY": "true",
        "CREWAI_DISABLE_TRACKING": "true",
        "CREWAI_TRACING_ENABLED": "false",
        "CREWAI_DISABLE_VERSION_CHECK": "true",
        "OPENINFERENCE_HIDE_INPUTS": "false",
        "OPENINFERENCE_HIDE_OUTPUTS": "false",
    },
    packages=[
        "crewai",
        "crewai-core",
        "openinference-instrumentation-crewai",
        "openinference-instrumentation-openai",
        "openinference-instrumentation",
        "openinference-semantic-conventions",
        "openai",
        "litellm",
        "opentelemetry-api",
        "opentelemetry-sdk",
        "opentelemetry-exporter-otlp-proto-http",
        "opentelemetry-exporter-otlp-json-http",
        "opentelemetry-exporter-otlp-json-file",
    ],
    run=_run,
    notes=[
        "agent: Agent(role='travel-agent', goal=..., backstory=SYSTEM_PROMPT, tools=[tool(get_weather), "
        "tool(get_time), tool(book_table)], llm=LLM(model='openai/gpt-4o-mini', base_url, api_key, "
        "max_retries=0, stream=<mode>)), one Task(description=user_text), Crew(..., tracing=False).kickoff()",
        "telemetry off: CREWAI_DISABLE_TELEMETRY=true, CREWAI_DISABLE_TRACKING=true, "
        "CREWAI_TRACING_ENABLED=false, CREWAI_DISABLE_VERSION_CHECK=true; OTEL_SDK_DISABLED is not set "
        "(it would disable our own SDK too)",
        "content capture: OpenInference records inputs/outputs by default; "
        "OPENINFERENCE_HIDE_INPUTS/OUTPUTS=false set explicitly (TraceConfig defaults)",
    ],
)
