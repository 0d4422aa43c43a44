"""A plain-`openai` agent whose model calls are instrumented by OpenInference (as many teams'
are) and whose tool calls go through `case.call_tool` *without* the model's call id: the model's
call is then seen twice — on the LLM span (with its id) and as the `call_tool` execution."""

import openai
from openinference.instrumentation.openai import OpenAIInstrumentor

OpenAIInstrumentor().instrument()  # the global tracer provider: the run's, set before this import


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
            result = case.call_tool(call.function.name, call.function.arguments)  # no call id
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    return None
