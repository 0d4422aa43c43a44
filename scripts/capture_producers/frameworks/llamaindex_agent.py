"""LlamaIndex agents: a `FunctionAgent` (llama-index-core's agent workflow) with the three tools as
`FunctionTool`s on `llama_index.llms.openai.OpenAI` (api_base at the scripted chat-completions
server), traced by OpenInference's `openinference-instrumentation-llama-index`
(`LlamaIndexInstrumentor().instrument(tracer_provider=tp)`).

`FunctionAgent(streaming=...)` says whether the model is called with `astream_chat_with_tools`
(its default) or `achat_with_tools`; the agent loops until a text answer.
"""

from __future__ import annotations

from typing import Any

from frameworks import AGENT_NAME, API_KEY, MODEL, SYSTEM_PROMPT, TOOL_FUNCTIONS, FrameworkConfig, FrameworkRun


def _run(pipeline: Any, base_url: str, user_text: str, streaming: bool) -> FrameworkRun:
    import asyncio

    from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

    tp = pipeline.make_tracer_provider()
    LlamaIndexInstrumentor().instrument(tracer_provider=tp)

    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.tools import FunctionTool
    from llama_index.llms.openai import OpenAI

    llm = OpenAI(model=MODEL, api_base=base_url, api_key=API_KEY, max_retries=0)
    agent = FunctionAgent(
        name=AGENT_NAME,
        tools=[FunctionTool.from_defaults(fn=f) for f in TOOL_FUNCTIONS],
        llm=llm,
        system_prompt=SYSTEM_PROMPT,
        streaming=streaming,
    )

    async def go() -> Any:
        return await agent.run(user_msg=user_text, max_iterations=8)

    result = asyncio.run(go())
    return FrameworkRun(str(result.response.content) if result.response.content is not None else None)


CONFIG = FrameworkConfig(
    name="llamaindex",
    framework="llamaindex",
    description="LlamaIndex FunctionAgent on llama-index-llms-openai, traced by "
    "openinference-instrumentation-llama-index",
    env={},
    packages=[
        "llama-index-core", "llama-index-llms-openai", "llama-index-workflows", "openinference-instrumentation-llama-index",
        "openinference-instrumentation", "openinference-semantic-conventions", "openai", "opentelemetry-api",
        "opentelemetry-sdk",
    ],  # fmt: skip
    run=_run,
    notes=["content capture: OpenInference records inputs/outputs by default (TraceConfig())"],
)
