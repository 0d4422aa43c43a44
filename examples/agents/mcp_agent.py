"""A process agent whose tools come from traceladder's MCP server, as a framework mounts them:
`traceladder run --agent-cmd "python examples/agents/mcp_agent.py"`.

It launches `traceladder tools serve` over stdio, lists the tools and calls them through the
official `mcp` client (`pip install 'traceladder[mcp]'`). The server inherits the case's
environment (TRACELADDER_CASE_ID, TRACELADDER_TOOLS_URL, TRACEPARENT), so every call executes in
the run's sandbox for this case and is an execute_tool span in the case's trace. MCP's stdio
client passes only a few variables to the server by default: pass the environment on.
"""

import asyncio
import json
import os
import sys

import openai
from mcp import Client
from mcp.client.stdio import StdioServerParameters

SERVER = StdioServerParameters(
    command=sys.executable,
    args=["-m", "traceladder", "tools", "serve", "--domain", os.environ.get("TRACELADDER_DOMAIN", "retail")],
    env=dict(os.environ),
)


def openai_tool(tool):
    return {"type": "function", "function": {"name": tool.name, "description": tool.description or "",
                                             "parameters": tool.input_schema}}  # fmt: skip


async def main():
    case = json.load(sys.stdin)
    client = openai.OpenAI(max_retries=1)  # OPENAI_BASE_URL and OPENAI_API_KEY from the environment
    model = os.environ["OPENAI_MODEL"]
    messages = [{"role": "system", "content": case["system_prompt"]}, *case["messages"]]
    async with Client(SERVER) as tools:
        offered = [openai_tool(t) for t in (await tools.list_tools()).tools]
        for _ in range(8):
            reply = client.chat.completions.create(model=model, messages=messages, tools=offered)
            message = reply.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                print(message.content or "")
                return
            for call in message.tool_calls:
                try:
                    arguments = json.loads(call.function.arguments)
                except ValueError:
                    arguments = call.function.arguments  # sent as is: the sandbox says invalid_json
                result = await tools.call_tool(call.function.name, arguments)
                content = "".join(part.text for part in result.content if part.type == "text")
                messages.append({"role": "tool", "tool_call_id": call.id, "content": content})


if __name__ == "__main__":
    asyncio.run(main())
