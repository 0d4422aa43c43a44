"""A process agent that mounts the run's MCP tool server over streamable HTTP, as a framework
would: `traceladder run --agent-cmd "python examples/agents/mcp_http_agent.py"`.

During a run with the `mcp` extra installed (`pip install 'traceladder[mcp]'`), each case's
environment has `TRACELADDER_MCP_URL`, that case's own endpoint: every call through it executes
in the run's sandbox for this case and is an execute_tool span in the case's trace.
"""

import asyncio
import json
import os
import sys

import openai
from mcp import Client


def openai_tool(tool):
    return {"type": "function", "function": {"name": tool.name, "description": tool.description or "",
                                             "parameters": tool.input_schema}}  # fmt: skip


async def main():
    case = json.load(sys.stdin)
    client = openai.OpenAI(max_retries=1)  # OPENAI_BASE_URL and OPENAI_API_KEY from the environment
    messages = [{"role": "system", "content": case["system_prompt"]}, *case["messages"]]
    async with Client(os.environ["TRACELADDER_MCP_URL"]) as tools:
        offered = [openai_tool(t) for t in (await tools.list_tools()).tools]
        for _ in range(8):
            reply = client.chat.completions.create(model=case["model"], messages=messages, tools=offered)
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
