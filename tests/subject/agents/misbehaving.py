"""Agents that misbehave, one function each, for the bad-input tests."""

import json
import threading
import time

import openai
from opentelemetry import context, trace

NOT_CALLABLE = 42


def two_arguments(case, extra):
    return "never called"


def raises(case):
    if case.id.endswith("2"):
        raise ValueError("the agent's own bug\nsecond line")
    return _solve(case)


def hangs_on_one(case):
    if case.id.endswith("2"):
        time.sleep(3600)
    return _solve(case)


def bad_tool_calls(case):
    """A tool that does not exist and arguments that are not JSON: each an observation, then the
    real work."""
    answers = [case.call_tool("no_such_tool", "{}"), case.call_tool("get_order", '{"order_id": ')]
    for answer in answers:
        assert json.loads(answer)["error"]["type"], answer
    return _solve(case)


def stray_spans(case):
    """A span in a trace of its own (detached from the case's context): not the case's."""
    tracer = trace.get_tracer("stray")
    with tracer.start_as_current_span("stray root", context=context.Context()):
        pass
    return _solve(case)


def tool_from_thread(case):
    """call_tool from a thread the agent started without its context: still the case's span."""
    box = {}
    thread = threading.Thread(target=lambda: box.update(answer=_solve(case)))
    thread.start()
    thread.join()
    return box["answer"]


def _solve(case):
    client = openai.OpenAI(base_url=case.base_url, api_key=case.api_key, max_retries=0)
    messages = [{"role": "system", "content": case.system_prompt}, *case.messages]
    for _ in range(8):
        reply = client.chat.completions.create(model=case.model, messages=messages, tools=list(case.tools))
        message = reply.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            return message.content
        for call in message.tool_calls:
            result = case.call_tool(call.function.name, call.function.arguments)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    return None


def slow(case):
    """Takes a while per case, so a test can stop the run in its middle."""
    time.sleep(0.4)
    return _solve(case)
