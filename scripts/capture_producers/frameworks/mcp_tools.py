"""MCP tool calls: an agent loop on the plain `openai` client whose tools live on an MCP server.

The server (frameworks/mcp_server.py, `mcp` 2.x `MCPServer` — FastMCP's new name — over stdio) is
started by the client as a subprocess. The client lists its tools, converts them to OpenAI function
definitions (name, description, `inputSchema` as parameters), asks the scripted model, and executes
every returned call with `ClientSession.call_tool(name, arguments)`; the text content of the result
(or of the error result) goes back to the model as the tool message. An argument string that is not
a JSON object cannot be sent to MCP at all (`arguments` is an object): the loop then answers the
model with `Error: ToolArgumentsError: ...` without calling the server.

Instrumentation (nothing hand-set):
  * MCP: the `mcp` SDK's own OpenTelemetry support (mcp >= 2: `mcp.shared._otel`), which follows
    OTel's MCP semantic conventions: a CLIENT span `MCP send <method> [<tool>]` per outbound request
    (dispatcher), W3C trace context injected into `params._meta`, and — in the server process — a
    SERVER span `<method> [<tool>]` (`OpenTelemetryMiddleware`, on by default) with
    `mcp.method.name`, `gen_ai.operation.name=execute_tool`, `gen_ai.tool.name`. Both use the global
    tracer provider. OpenLLMetry's `opentelemetry-instrumentation-mcp` 0.62.4 patches
    `mcp.shared.session.BaseSession`, which mcp 2.x no longer has; `openinference-instrumentation-mcp`
    2.0.13 only propagates context (no spans). So neither is used.
  * openai: `opentelemetry-instrumentation-genai-openai` (chat spans with gen_ai.input/output.messages
    and gen_ai.tool.definitions; content capture span_only).
  * the run: util-genai's `invoke_local_agent` span as the root, so one trace holds everything.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from frameworks import AGENT_NAME, API_KEY, MODEL, SYSTEM_PROMPT, FrameworkConfig, FrameworkRun

SERVER_SCRIPT = Path(__file__).resolve().parent / "mcp_server.py"
MAX_TURNS = 6


class ToolArgumentsError(ValueError):
    """The model's argument string is not a JSON object."""


def _parse_arguments(raw: str) -> dict[str, Any]:
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ToolArgumentsError(f"arguments are not valid JSON: {exc.msg} at char {exc.pos}") from None
    if not isinstance(value, dict):
        raise ToolArgumentsError("arguments must be a JSON object")
    return value


async def _complete(client: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]], streaming: bool):
    """One chat completion; returns (content, tool_calls as OpenAI message dicts)."""
    if not streaming:
        response = await client.chat.completions.create(model=MODEL, messages=messages, tools=tools)
        msg = response.choices[0].message
        calls = [
            {"id": tc.id, "type": "function", "function": {"name": tc.function.name, "arguments": tc.function.arguments}}
            for tc in msg.tool_calls or []
        ]
        return msg.content, calls
    stream = await client.chat.completions.create(model=MODEL, messages=messages, tools=tools, stream=True)
    content: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    async for chunk in stream:
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        if delta.content:
            content.append(delta.content)
        for tc in delta.tool_calls or []:
            call = calls.setdefault(
                tc.index, {"id": None, "type": "function", "function": {"name": "", "arguments": ""}}
            )
            if tc.id:
                call["id"] = tc.id
            if tc.function and tc.function.name:
                call["function"]["name"] += tc.function.name
            if tc.function and tc.function.arguments:
                call["function"]["arguments"] += tc.function.arguments
    return ("".join(content) or None), [calls[i] for i in sorted(calls)]


def _result_text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", None) == "text")


def _run(pipeline: Any, base_url: str, user_text: str, streaming: bool) -> FrameworkRun:
    import asyncio

    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from openai import AsyncOpenAI
    from opentelemetry import trace
    from opentelemetry.instrumentation.genai.openai import OpenAIInstrumentor
    from opentelemetry.util.genai.handler import TelemetryHandler

    from producers import COMMON_ENV

    tp = pipeline.make_tracer_provider()
    trace.set_tracer_provider(tp)  # the mcp SDK's spans use the global provider
    OpenAIInstrumentor().instrument(tracer_provider=tp)
    handler = TelemetryHandler(tracer_provider=tp)

    server = StdioServerParameters(
        command=sys.executable,
        args=[str(SERVER_SCRIPT)],
        env={
            **COMMON_ENV,
            "CAPTURE_SINK_URL": pipeline.sink_url,
            "CAPTURE_WORKDIR": str(pipeline.workdir),
            "CAPTURE_SERVICE_NAME": f"{pipeline.service_name}-server",
        },
    )

    async def main() -> FrameworkRun:
        client = AsyncOpenAI(base_url=base_url, api_key=API_KEY, max_retries=0)
        try:
            with handler.invoke_local_agent(request_model=MODEL, agent_name=AGENT_NAME):
                async with stdio_client(server, errlog=open(os.devnull, "w")) as streams:  # noqa: SIM115
                    async with ClientSession(*streams) as session:
                        await session.initialize()
                        listed = await session.list_tools()
                        tools = [
                            {
                                "type": "function",
                                "function": {
                                    "name": t.name,
                                    "description": t.description,
                                    "parameters": t.input_schema,
                                },
                            }
                            for t in listed.tools
                        ]
                        messages: list[dict[str, Any]] = [
                            {"role": "system", "content": SYSTEM_PROMPT},
                            {"role": "user", "content": user_text},
                        ]
                        for _turn in range(MAX_TURNS):
                            content, calls = await _complete(client, messages, tools, streaming)
                            if not calls:
                                return FrameworkRun(content)
                            messages.append({"role": "assistant", "content": content, "tool_calls": calls})
                            for call in calls:
                                try:
                                    arguments = _parse_arguments(call["function"]["arguments"])
                                except ToolArgumentsError as exc:
                                    output = f"Error: {type(exc).__name__}: {exc}"
                                else:
                                    result = await session.call_tool(call["function"]["name"], arguments)
                                    output = _result_text(result)
                                messages.append({"role": "tool", "tool_call_id": call["id"], "content": output})
                        return FrameworkRun(None, f"no final answer after {MAX_TURNS} turns")
        finally:
            await client.close()

    return asyncio.run(main())


CONFIG = FrameworkConfig(
    name="mcp",
    framework="mcp",
    description="MCP tool calls: agent loop on the openai client executing each call with "
    "mcp ClientSession.call_tool against an MCPServer (stdio subprocess); spans from the mcp SDK's "
    "own OpenTelemetry support (client and server), opentelemetry-instrumentation-genai-openai, "
    "util-genai invoke_agent root",
    env={"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_only"},
    packages=[
        "mcp",
        "mcp-types",
        "opentelemetry-instrumentation-genai-openai",
        "opentelemetry-util-genai",
        "opentelemetry-instrumentation",
        "opentelemetry-semantic-conventions",
        "openai",
        "opentelemetry-api",
        "opentelemetry-sdk",
    ],
    run=_run,
    notes=[
        "content capture: OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only (openai chat spans); "
        "the mcp SDK's spans never carry arguments or results (it has no content setting)",
        "the MCP server runs in a subprocess with its own Pipeline to the same sink and JSON-lines file, "
        "resource service.name=traceladder-fixture-mcp-server; it flushes when stdin closes, so its "
        "OTLP requests arrive before the client's",
        "MCPServer is mcp 2.x's FastMCP (mcp.server.fastmcp was removed in mcp 2)",
    ],
)
