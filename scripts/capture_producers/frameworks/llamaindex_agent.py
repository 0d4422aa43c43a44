"""LlamaIndex agents: a `FunctionAgent` (llama-index-core's agent workflow) with the three tools as
`FunctionTool`s on `llama_index.llms.openai.OpenAI` (api_base at the scripted chat-completions
server), traced two ways: OpenInference's `openinference-instrumentation-llama-index`
(`llamaindex`) and OpenLLMetry's `opentelemetry-instrumentation-llamaindex`
(`llamaindex-openllmetry`), each `LlamaIndexInstrumentor().instrument(tracer_provider=tp)`; one
venv holds both, only the producer's own is turned on.

`FunctionAgent(streaming=...)` says whether the model is called with `astream_chat_with_tools`
(its default) or `achat_with_tools`; the agent loops until a text answer.
"""

from __future__ import annotations

from typing import Any

from frameworks import AGENT_NAME, API_KEY, MODEL, SYSTEM_PROMPT, TOOL_FUNCTIONS, FrameworkConfig, FrameworkRun


def _run_openinference(pipeline: Any, base_url: str, user_text: str, streaming: bool) -> FrameworkRun:
    from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

    tp = pipeline.make_tracer_provider()
    LlamaIndexInstrumentor().instrument(tracer_provider=tp)
    return _run(base_url, user_text, streaming)


def _run_openllmetry(pipeline: Any, base_url: str, user_text: str, streaming: bool) -> FrameworkRun:
    from opentelemetry.instrumentation.llamaindex import LlamaIndexInstrumentor

    tp = pipeline.make_tracer_provider()
    LlamaIndexInstrumentor().instrument(tracer_provider=tp)
    return _run(base_url, user_text, streaming)


def _run(base_url: str, user_text: str, streaming: bool) -> FrameworkRun:
    import asyncio

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


_CORE = ["llama-index-core", "llama-index-llms-openai", "llama-index-workflows", "openai", "opentelemetry-api",
         "opentelemetry-sdk"]  # fmt: skip
CONFIGS = [
    FrameworkConfig(
        name="llamaindex",
        framework="llamaindex",
        description="LlamaIndex FunctionAgent on llama-index-llms-openai, traced by "
        "openinference-instrumentation-llama-index",
        env={},
        packages=["openinference-instrumentation-llama-index", "openinference-instrumentation",
                  "openinference-semantic-conventions", *_CORE],  # fmt: skip
        run=_run_openinference,
        notes=["content capture: OpenInference records inputs/outputs by default (TraceConfig())"],
    ),
    FrameworkConfig(
        name="llamaindex-openllmetry",
        framework="llamaindex",
        description="LlamaIndex FunctionAgent on llama-index-llms-openai, traced by OpenLLMetry's "
        "opentelemetry-instrumentation-llamaindex (without traceloop-sdk)",
        env={"TRACELOOP_TRACE_CONTENT": "true", "TRACELOOP_TELEMETRY": "false"},
        packages=["opentelemetry-instrumentation-llamaindex", "opentelemetry-semantic-conventions-ai", *_CORE],
        run=_run_openllmetry,
        notes=["content capture: TRACELOOP_TRACE_CONTENT=true (also its default)",
               "captured in the llamaindex venv (requirements/llamaindex.txt holds both instrumentations)"],  # fmt: skip
    ),
]
