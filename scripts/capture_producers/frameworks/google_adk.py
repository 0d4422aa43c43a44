"""Google ADK (`google-adk`) with an OpenAI-compatible model through LiteLLM, ADK's own tracing.

ADK's `google.adk.telemetry` gets its tracer from the *global* TracerProvider
(`trace.get_tracer('gcp.vertex.agent')`, resolved lazily through the proxy), so the pipeline's
provider is set as the global one. ADK 1.14 has no content-capture setting: it always writes the
request/response JSON and the tool arguments/results into `gcp.vertex.agent.*` attributes.
Model: `LiteLlm(model="openai/gpt-4o-mini", api_base=<scripted server>, api_key=..., max_retries=0)`
(chat completions through litellm's OpenAI provider). Streaming:
`RunConfig(streaming_mode=StreamingMode.SSE)` (LiteLlm then calls litellm with `stream=True`);
plain: `StreamingMode.NONE`. ADK agent names must be identifiers: `travel_agent`.
"""

from __future__ import annotations

from frameworks import API_KEY, MODEL, SYSTEM_PROMPT, TOOL_FUNCTIONS, FrameworkConfig, FrameworkRun

ADK_AGENT_NAME = "travel_agent"  # ADK rejects "travel-agent" (agent names must be identifiers)


def _run(pipeline, base_url: str, user_text: str, streaming: bool) -> FrameworkRun:
    import asyncio

    from opentelemetry import trace

    trace.set_tracer_provider(pipeline.make_tracer_provider())

    from google.adk.agents import LlmAgent
    from google.adk.agents.run_config import RunConfig, StreamingMode
    from google.adk.models.lite_llm import LiteLlm
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    agent = LlmAgent(
        name=ADK_AGENT_NAME,
        model=LiteLlm(model=f"openai/{MODEL}", api_base=base_url, api_key=API_KEY, max_retries=0),
        instruction=SYSTEM_PROMPT,
        tools=list(TOOL_FUNCTIONS),
    )
    runner = InMemoryRunner(agent=agent, app_name="traceladder-fixture")
    run_config = RunConfig(streaming_mode=StreamingMode.SSE if streaming else StreamingMode.NONE)

    async def main() -> str | None:
        session = await runner.session_service.create_session(app_name="traceladder-fixture", user_id="user")
        final = None
        message = types.Content(role="user", parts=[types.Part(text=user_text)])
        async for event in runner.run_async(
            user_id="user", session_id=session.id, new_message=message, run_config=run_config
        ):
            if event.is_final_response() and event.content and event.content.parts:
                final = "".join(p.text or "" for p in event.content.parts) or final
        return final

    return FrameworkRun(asyncio.run(main()))


CONFIG = FrameworkConfig(
    name="google-adk",
    framework="google-adk",
    description="Google ADK LlmAgent on LiteLlm('openai/gpt-4o-mini') (chat completions via litellm), "
    "ADK's own OTel tracing on the global TracerProvider",
    env={"LITELLM_LOCAL_MODEL_COST_MAP": "True"},  # litellm would fetch its price list from the network
    packages=[
        "google-adk",
        "google-genai",
        "litellm",
        "openai",
        "opentelemetry-api",
        "opentelemetry-sdk",
        "opentelemetry-exporter-otlp-proto-http",
        "opentelemetry-exporter-otlp-json-http",
    ],
    run=_run,
    notes=[
        "content capture: ADK 1.14 has no setting; request/response/tool args/results are always in "
        "gcp.vertex.agent.* attributes; tracer provider: the pipeline's, set as the global one",
        "streaming: RunConfig(streaming_mode=StreamingMode.SSE); plain: StreamingMode.NONE",
        "agent name travel_agent (ADK requires an identifier); "
        "LITELLM_LOCAL_MODEL_COST_MAP=True keeps litellm offline",
    ],
)
