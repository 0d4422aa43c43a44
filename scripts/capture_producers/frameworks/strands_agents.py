"""Strands Agents (`strands-agents[openai]`) with its own OpenTelemetry tracing.

Strands' `Tracer` reads the *global* TracerProvider (`trace_api.get_tracer_provider()`, once, when
the first agent is built), so the pipeline's provider is set as the global one first.
Content (messages, tool arguments and results) is always recorded; nothing turns it on (the only
knob is the opt-in redaction token `gen_ai_unredacted_attributes=...`, not used).
The model is `strands.models.openai.OpenAIModel` (chat completions) with
`client_args={"base_url": ..., "api_key": ..., "max_retries": 0}`; its `stream` config
(default True) selects streaming, so plain mode sets `stream=False`. The agent's model retry
strategy is off (`retry_strategy=None`).

Two configs: `strands` (default conventions) and `strands-latest`
(`OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental,gen_ai_tool_definitions`).
"""

from __future__ import annotations

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
    from opentelemetry import trace

    trace.set_tracer_provider(pipeline.make_tracer_provider())  # before strands builds its Tracer

    from strands import Agent, tool
    from strands.models.openai import OpenAIModel

    model = OpenAIModel(
        client_args={"base_url": base_url, "api_key": API_KEY, "max_retries": 0},
        model_id=MODEL,
        stream=streaming,
    )
    agent = Agent(
        model=model,
        tools=[tool(f) for f in TOOL_FUNCTIONS],
        system_prompt=SYSTEM_PROMPT,
        name=AGENT_NAME,
        callback_handler=None,  # the default handler prints the stream to stdout
        retry_strategy=None,
    )
    result = agent(user_text)
    return FrameworkRun(str(result).strip())


_PACKAGES = [
    "strands-agents",
    "openai",
    "opentelemetry-api",
    "opentelemetry-sdk",
    "opentelemetry-instrumentation-threading",
    "opentelemetry-exporter-otlp-proto-http",
    "opentelemetry-exporter-otlp-json-http",
]
_NOTES = [
    "content capture: always on in strands (no setting); tracer provider: the pipeline's, set as the "
    "global one (opentelemetry.trace.set_tracer_provider) before the Agent is built",
    "streaming: OpenAIModel(stream=True) (strands' default) in stream mode, stream=False in plain mode",
    "model client: client_args={'base_url': <scripted server>, 'api_key': ..., 'max_retries': 0}; "
    "Agent(retry_strategy=None, callback_handler=None)",
]

CONFIGS = [
    FrameworkConfig(
        name="strands",
        framework="strands-agents",
        description="Strands Agents on strands.models.openai.OpenAIModel (chat completions), "
        "strands' own OTel tracing on the global TracerProvider, default conventions",
        env={},
        packages=_PACKAGES,
        run=_run,
        notes=_NOTES,
    ),
    FrameworkConfig(
        name="strands-latest",
        framework="strands-agents",
        description="Strands Agents on strands.models.openai.OpenAIModel (chat completions), "
        "strands' own OTel tracing, latest experimental GenAI conventions plus tool definitions",
        env={"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental,gen_ai_tool_definitions"},
        packages=_PACKAGES,
        run=_run,
        notes=_NOTES,
    ),
]
