"""Multi-turn agents: each producer plays the four-turn conversation the way its users write one.

`PRODUCERS[name].run(pipeline, base_url, users, streaming, end_turn)` turns the producer's
instrumentation on (on `pipeline`'s TracerProvider), builds one agent with the three tools of
`conversation_script`, and plays `users` in order with the producer's own way of carrying the
dialogue — the thing under test:

* LangGraph: `create_agent(..., checkpointer=InMemorySaver())`, every turn `invoke(..., config=
  {"configurable": {"thread_id": ...}})` with only the new user message;
* OpenAI Agents SDK: one `SQLiteSession` (in memory) passed to every `Runner.run`;
* pydantic-ai: `agent.run(text, message_history=previous.all_messages())`;
* Strands: one `Agent` object called once per turn (it keeps its own messages);
* plain `openai` loop: one messages list, each turn under the producer's agent span.

After each turn it calls `end_turn(turn, final_text)` (the capture flushes the spans there, so it
knows which traces each turn wrote). Nothing sets a convention attribute by hand.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from conversation_script import SYSTEM_PROMPT, TOOL_FUNCTIONS, TOOL_IMPLS, TOOLS

MODEL = "gpt-4o-mini"
API_KEY = "sk-fixture-not-a-key"
AGENT_NAME = "support-agent"
THREAD_ID = "support-thread-1"  # LangGraph's thread, the Agents SDK's session id
EndTurn = Callable[[int, str | None], None]


@dataclass
class ConversationProducer:
    name: str  # fixture directory name
    framework: str
    description: str
    env: dict[str, str]
    packages: list[str]
    run: Callable[[Any, str, list[str], bool, EndTurn], None]
    modes: tuple[str, ...] = ("plain", "stream")
    notes: list[str] = field(default_factory=list)


# --- LangGraph ------------------------------------------------------------------------------


def _langgraph(users: list[str], base_url: str, streaming: bool, end_turn: EndTurn) -> None:
    from langchain.agents import create_agent
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.memory import InMemorySaver

    llm = ChatOpenAI(model=MODEL, base_url=base_url, api_key=API_KEY, max_retries=0, streaming=streaming)
    agent = create_agent(
        llm, tools=TOOL_FUNCTIONS, system_prompt=SYSTEM_PROMPT, name=AGENT_NAME, checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": THREAD_ID}}
    for turn, text in enumerate(users):
        state = agent.invoke({"messages": [{"role": "user", "content": text}]}, config)
        end_turn(turn, str(state["messages"][-1].content))


def _langgraph_openinference(
    pipeline: Any, base_url: str, users: list[str], streaming: bool, end: EndTurn
) -> None:
    from openinference.instrumentation.langchain import LangChainInstrumentor

    LangChainInstrumentor().instrument(tracer_provider=pipeline.make_tracer_provider())
    _langgraph(users, base_url, streaming, end)


def _langgraph_openllmetry(
    pipeline: Any, base_url: str, users: list[str], streaming: bool, end: EndTurn
) -> None:
    from opentelemetry.instrumentation.langchain import LangchainInstrumentor

    LangchainInstrumentor().instrument(tracer_provider=pipeline.make_tracer_provider())
    _langgraph(users, base_url, streaming, end)


# --- OpenAI Agents SDK ----------------------------------------------------------------------


def _agents_sdk(pipeline: Any, base_url: str, users: list[str], streaming: bool, end_turn: EndTurn) -> None:
    from agents import (
        Agent,
        OpenAIChatCompletionsModel,
        RunConfig,
        Runner,
        SQLiteSession,
        function_tool,
        set_trace_processors,
    )
    from openai import AsyncOpenAI
    from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    tp = pipeline.make_tracer_provider()
    set_trace_processors([])  # drop the SDK's exporter to OpenAI's backend; tracing stays on
    OpenAIAgentsInstrumentor().instrument(tracer_provider=tp)

    async def main() -> None:
        client = AsyncOpenAI(base_url=base_url, api_key=API_KEY, max_retries=0)
        agent = Agent(
            name=AGENT_NAME,
            instructions=SYSTEM_PROMPT,
            model=OpenAIChatCompletionsModel(model=MODEL, openai_client=client),
            tools=[function_tool(f) for f in TOOL_FUNCTIONS],
        )
        session = SQLiteSession(THREAD_ID)  # in memory
        run_config = RunConfig(trace_include_sensitive_data=True)
        try:
            for turn, text in enumerate(users):
                if streaming:
                    result = Runner.run_streamed(agent, text, session=session, run_config=run_config)
                    async for _event in result.stream_events():
                        pass
                else:
                    result = await Runner.run(agent, text, session=session, run_config=run_config)
                end_turn(turn, str(result.final_output))
        finally:
            await client.close()

    asyncio.run(main())


# --- pydantic-ai ----------------------------------------------------------------------------


def _pydantic_ai(pipeline: Any, base_url: str, users: list[str], streaming: bool, end_turn: EndTurn) -> None:
    from openai import AsyncOpenAI
    from pydantic_ai import Agent, InstrumentationSettings
    from pydantic_ai.capabilities import Instrumentation
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    tp = pipeline.make_tracer_provider()

    async def main() -> None:
        client = AsyncOpenAI(base_url=base_url, api_key=API_KEY, max_retries=0)
        agent = Agent(
            OpenAIChatModel(MODEL, provider=OpenAIProvider(openai_client=client)),
            name=AGENT_NAME,
            system_prompt=SYSTEM_PROMPT,
            tools=TOOL_FUNCTIONS,
            capabilities=[
                Instrumentation(settings=InstrumentationSettings(tracer_provider=tp, include_content=True))
            ],
        )
        history: list[Any] | None = None
        for turn, text in enumerate(users):
            if streaming:
                async with agent.run_stream(text, message_history=history) as result:
                    output = await result.get_output()
                history = result.all_messages()
            else:
                run = await agent.run(text, message_history=history)
                output, history = run.output, run.all_messages()
            end_turn(turn, str(output))

    asyncio.run(main())


# --- Strands --------------------------------------------------------------------------------


def _strands(pipeline: Any, base_url: str, users: list[str], streaming: bool, end_turn: EndTurn) -> None:
    from opentelemetry import trace

    trace.set_tracer_provider(pipeline.make_tracer_provider())  # strands reads the global one

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
        callback_handler=None,
        retry_strategy=None,
    )
    for turn, text in enumerate(users):
        end_turn(turn, str(agent(text)).strip())


# --- plain openai loop (producers.py's telemetry for the agent and tool spans) --------------


def _plain_loop(setup: str) -> Callable[[Any, str, list[str], bool, EndTurn], None]:
    def run(pipeline: Any, base_url: str, users: list[str], streaming: bool, end_turn: EndTurn) -> None:
        import openai
        from agent import AgentResult, ToolCall
        from producers import PRODUCERS

        telemetry = PRODUCERS[setup].setup(pipeline)
        client = openai.OpenAI(base_url=base_url, api_key=API_KEY, max_retries=0)
        messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT}]
        for turn, text in enumerate(users):

            def body(text: str = text) -> AgentResult:
                result = AgentResult()
                messages.append({"role": "user", "content": text})
                for step in range(1, 6):
                    if streaming:
                        content, calls = _streamed(client, messages)
                        said: dict[str, Any] = {"role": "assistant", "content": content, "tool_calls": [
                            {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
                            for i, n, a in calls
                        ]}  # fmt: skip
                    else:
                        msg = (
                            client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS)
                            .choices[0]
                            .message
                        )
                        content, said = msg.content, msg.model_dump(exclude_none=True)
                        calls = [
                            (tc.id, tc.function.name, tc.function.arguments) for tc in msg.tool_calls or []
                        ]
                    if not calls:
                        messages.append({"role": "assistant", "content": content})
                        result.final_text = content
                        return result
                    messages.append(said)
                    for index, (call_id, name, arguments) in enumerate(calls):
                        call = ToolCall(step, index, call_id, name, arguments)
                        fn = TOOL_IMPLS[call.name]
                        out = telemetry.run_tool(
                            call, lambda fn=fn, call=call: fn(**json.loads(call.arguments_raw))
                        )
                        messages.append({"role": "tool", "tool_call_id": call_id, "content": out})
                return result

            end_turn(turn, telemetry.run_agent(text, body).final_text)
        client.close()

    return run


def _streamed(client: Any, messages: list[dict[str, Any]]) -> tuple[str | None, list[tuple[str, str, str]]]:
    """One streamed request, read the way a plain loop's author does: text deltas joined, each
    tool call's id, name and argument fragments gathered by its index."""
    stream = client.chat.completions.create(
        model=MODEL, messages=messages, tools=TOOLS, stream=True, stream_options={"include_usage": True}
    )
    text: list[str] = []
    calls: dict[int, list[str]] = {}
    for chunk in stream:
        for choice in chunk.choices:
            delta = choice.delta
            if delta.content:
                text.append(delta.content)
            for tc in delta.tool_calls or []:
                entry = calls.setdefault(tc.index, ["", "", ""])
                entry[0] = tc.id or entry[0]
                if tc.function is not None:
                    entry[1] = tc.function.name or entry[1]
                    entry[2] += tc.function.arguments or ""
    return ("".join(text) or None), [(i, n, a) for i, n, a in (calls[k] for k in sorted(calls))]


_LANGCHAIN = [
    "langchain",
    "langchain-core",
    "langchain-openai",
    "langgraph",
    "langgraph-checkpoint",
    "openai",
]
_OTEL = ["opentelemetry-api", "opentelemetry-sdk"]

PRODUCERS: dict[str, ConversationProducer] = {
    p.name: p
    for p in [
        ConversationProducer(
            "langgraph-openinference", "langgraph",
            "LangGraph create_agent with InMemorySaver + thread_id, traced by openinference-instrumentation-langchain",
            {"OPENINFERENCE_HIDE_INPUTS": "false", "OPENINFERENCE_HIDE_OUTPUTS": "false"},
            _LANGCHAIN + ["openinference-instrumentation-langchain", "openinference-instrumentation", *_OTEL],
            _langgraph_openinference,
        ),
        ConversationProducer(
            "langgraph-openllmetry", "langgraph",
            "LangGraph create_agent with InMemorySaver + thread_id, traced by OpenLLMetry's "
            "opentelemetry-instrumentation-langchain",
            {"TRACELOOP_TRACE_CONTENT": "true", "TRACELOOP_TELEMETRY": "false"},
            _LANGCHAIN + ["opentelemetry-instrumentation-langchain", *_OTEL],
            _langgraph_openllmetry,
        ),
        ConversationProducer(
            "openai-agents-otel", "openai-agents",
            "OpenAI Agents SDK (OpenAIChatCompletionsModel) with one SQLiteSession, traced by "
            "opentelemetry-instrumentation-openai-agents-v2",
            {"OPENAI_AGENTS_TRACE_INCLUDE_SENSITIVE_DATA": "true",
             "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_and_event"},
            ["openai-agents", "opentelemetry-instrumentation-openai-agents-v2", "openai", *_OTEL],
            _agents_sdk,
        ),
        ConversationProducer(
            "pydantic-ai", "pydantic-ai",
            "pydantic-ai Agent on OpenAIChatModel, native OTel instrumentation, message_history carried",
            {}, ["pydantic-ai-slim", "openai", *_OTEL], _pydantic_ai,
        ),
        ConversationProducer(
            "strands", "strands-agents",
            "Strands Agents on OpenAIModel, one Agent object called once per turn, strands' own tracing",
            {}, ["strands-agents", "openai", *_OTEL], _strands,
        ),
        ConversationProducer(
            "openai-openinference", "openai",
            "plain openai loop carrying one messages list, openinference-instrumentation-openai, "
            "each turn under an OITracer agent span",
            {}, ["openai", "openinference-instrumentation-openai", *_OTEL], _plain_loop("openinference"),
        ),
        ConversationProducer(
            "openai-otel-genai", "openai",
            "plain openai loop carrying one messages list, opentelemetry-instrumentation-genai-openai "
            "(span_only content), each turn under util-genai's invoke_agent span",
            {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_only"},
            ["openai", "opentelemetry-instrumentation-genai-openai", "opentelemetry-util-genai", *_OTEL],
            _plain_loop("otel-genai-openai"),
        ),
    ]
}  # fmt: skip
