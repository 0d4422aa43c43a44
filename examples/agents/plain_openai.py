"""A plain-`openai` agent: `traceladder run --agent examples/agents/plain_openai.py:run`.

traceladder calls `run(case)` once per case. The agent talks to `case.model` at `case.base_url`
(a simulated model served on 127.0.0.1 unless you configure a real one) and executes every tool
call through `case.call_tool`, which runs it in the domain's sandbox and records it.
"""

import json

import openai


def run(case):
    client = openai.OpenAI(base_url=case.base_url, api_key=case.api_key or "unused", max_retries=1)
    messages = [{"role": "system", "content": case.system_prompt}, *case.messages]
    for _ in range(8):
        reply = client.chat.completions.create(model=case.model, messages=messages, tools=list(case.tools))
        message = reply.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            return message.content
        for call in message.tool_calls:
            result = case.call_tool(call.function.name, call.function.arguments, call.id)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    return json.dumps({"error": "no answer after 8 model requests"})
