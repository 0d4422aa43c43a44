"""LangGraph agent (langchain.agents.create_agent, the LangGraph-based replacement of the deprecated
langgraph.prebuilt.create_react_agent) on langchain-openai ChatOpenAI, traced by either
OpenInference's or OpenLLMetry's LangChain instrumentation (two producers, one agent)."""

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

LANGCHAIN_PKGS = [
    "langchain",
    "langchain-core",
    "langchain-openai",
    "langgraph",
    "langgraph-prebuilt",
    "openai",
    "opentelemetry-api",
    "opentelemetry-sdk",
    "opentelemetry-exporter-otlp-proto-http",
    "opentelemetry-exporter-otlp-json-http",
    "opentelemetry-exporter-otlp-json-file",
    "opentelemetry-instrumentation",
    "opentelemetry-semantic-conventions",
]


def _run_agent(base_url: str, user_text: str, streaming: bool) -> FrameworkRun:
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage
    from langchain_openai import ChatOpenAI

    llm = ChatOpenAI(model=MODEL, base_url=base_url, api_key=API_KEY, max_retries=0, streaming=streaming)
    agent = create_agent(llm, tools=TOOL_FUNCTIONS, system_prompt=SYSTEM_PROMPT, name=AGENT_NAME)
    state = agent.invoke({"messages": [{"role": "user", "content": user_text}]})
    last = state["messages"][-1]
    if isinstance(last, AIMessage) and not last.tool_calls and last.invalid_tool_calls and not last.content:
        invalid = [
            (c.get("id"), c.get("name"), c.get("args"), c.get("error")) for c in last.invalid_tool_calls
        ]
        return FrameworkRun(
            None,
            "AgentStopped: the response's only tool calls were invalid (AIMessage.invalid_tool_calls); "
            "create_agent routes a message without tool_calls to the end",
            f"invalid_tool_calls={invalid!r}",
        )
    return FrameworkRun(last.text if hasattr(last, "text") else str(last.content))


def _run_openinference(pipeline: Any, base_url: str, user_text: str, streaming: bool) -> FrameworkRun:
    from openinference.instrumentation.langchain import LangChainInstrumentor

    tp = pipeline.make_tracer_provider()
    LangChainInstrumentor().instrument(tracer_provider=tp)
    return _run_agent(base_url, user_text, streaming)


def _run_openllmetry(pipeline: Any, base_url: str, user_text: str, streaming: bool) -> FrameworkRun:
    from opentelemetry.instrumentation.langchain import LangchainInstrumentor

    tp = pipeline.make_tracer_provider()
    LangchainInstrumentor().instrument(tracer_provider=tp)
    return _run_agent(base_url, user_text, streaming)


COMMON_NOTES = [
    "agent: langchain.agents.create_agent(ChatOpenAI(model, base_url, api_key, max_retries=0, "
    "streaming=<mode>), tools=[get_weather, get_time, book_table] as plain functions, system_prompt, "
    "name='travel-agent'); langgraph.prebuilt.create_react_agent still exists but is deprecated "
    "('moved to langchain.agents')",
    "langchain-openai parses each tool call's arguments; a call whose arguments are not JSON goes to "
    "AIMessage.invalid_tool_calls and is never executed; a message with no valid tool_calls ends the agent",
]

CONFIGS = [
    FrameworkConfig(
        name="langgraph-openinference",
        framework="langgraph",
        description="LangGraph agent (langchain.agents.create_agent) on ChatOpenAI, traced by "
        "openinference-instrumentation-langchain",
        env={"OPENINFERENCE_HIDE_INPUTS": "false", "OPENINFERENCE_HIDE_OUTPUTS": "false"},
        packages=LANGCHAIN_PKGS
        + [
            "openinference-instrumentation-langchain",
            "openinference-instrumentation",
            "openinference-semantic-conventions",
        ],
        run=_run_openinference,
        notes=COMMON_NOTES
        + [
            "content capture: OpenInference records inputs/outputs by default; "
            "OPENINFERENCE_HIDE_INPUTS/OUTPUTS=false set explicitly (TraceConfig defaults)"
        ],
    ),
    FrameworkConfig(
        name="langgraph-openllmetry",
        framework="langgraph",
        description="LangGraph agent (langchain.agents.create_agent) on ChatOpenAI, traced by "
        "OpenLLMetry's opentelemetry-instrumentation-langchain (no traceloop-sdk)",
        env={"TRACELOOP_TRACE_CONTENT": "true", "TRACELOOP_TELEMETRY": "false"},
        packages=LANGCHAIN_PKGS
        + ["opentelemetry-instrumentation-langchain", "opentelemetry-semantic-conventions-ai"],
        run=_run_openllmetry,
        notes=COMMON_NOTES
        + [
            "content capture: TRACELOOP_TRACE_CONTENT=true (read by "
            "opentelemetry-instrumentation-langchain); "
            "LangchainInstrumentor().instrument(tracer_provider=...) without Traceloop.init"
        ],
    ),
]
