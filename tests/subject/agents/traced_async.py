"""An async agent with its own OpenTelemetry instrumentation (a span per step, taken from the
global tracer provider at import time, as instrumentation libraries do)."""

import openai
from opentelemetry import trace

tracer = trace.get_tracer("my-agent")


async def run(case):
    client = openai.AsyncOpenAI(base_url=case.base_url, api_key=case.api_key, max_retries=0)
    messages = [{"role": "system", "content": case.system_prompt}, *case.messages]
    try:
        for step in range(8):
            with tracer.start_as_current_span(f"my_agent.step {step}"):
                reply = await client.chat.completions.create(
                    model=case.model, messages=messages, tools=list(case.tools)
                )
                message = reply.choices[0].message
                messages.append(message.model_dump(exclude_none=True))
                if not message.tool_calls:
                    return message.content
                for call in message.tool_calls:
                    result = case.call_tool(call.function.name, call.function.arguments)
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    finally:
        await client.close()
    return None
