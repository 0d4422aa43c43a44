"""A command agent (`--agent-cmd`) for multi-turn cases: reads the case from stdin, answers its
latest message with the plain openai loop, tools through TRACELADDER_TOOLS_URL; it records which
turn it was called for and what history it got (TURNS_LOG), so a test can check the contract."""

import json
import os
import sys
import urllib.request

import openai

case = json.load(sys.stdin)
with open(os.environ["TURNS_LOG"], "a") as log:
    log.write(json.dumps({"turn": case["turn"], "messages": case["messages"],
                          "conversation_id": case["conversation_id"]}) + "\n")  # fmt: skip
client = openai.OpenAI(base_url=os.environ["OPENAI_BASE_URL"], api_key="unused", max_retries=1)
messages = [{"role": "system", "content": case["system_prompt"]}, *case["messages"]]
for _ in range(8):
    reply = client.chat.completions.create(model=case["model"], messages=messages, tools=case["tools"])
    message = reply.choices[0].message
    messages.append(message.model_dump(exclude_none=True))
    if not message.tool_calls:
        print(message.content)
        break
    for call in message.tool_calls:
        body = json.dumps({"name": call.function.name, "arguments": call.function.arguments}).encode()
        url = os.environ["TRACELADDER_TOOLS_URL"]
        request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
        with urllib.request.urlopen(request) as answer:
            result = json.loads(answer.read())["content"]
        messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
