"""LiteLLM (`litellm.completion`, provider `openai/` on the scripted chat-completions server) with
LiteLLM's own OpenTelemetry callback (`litellm.integrations.opentelemetry.OpenTelemetry`, given
the capture's tracer provider; what `litellm.callbacks = ["otel"]` builds from `OTEL_*` env vars).

A plain agent loop like anthropic_messages.py: the OpenAI-format tools, each returned call run
with the fake tools (an argument string that is not a JSON object gives the model
`Error: ToolArgumentsError: ...`), results fed back as `tool` messages, until a text answer; the
loop runs inside one attribute-less span `agent run`. Streaming: `stream=True`, the chunks joined
with `litellm.stream_chunk_builder`.
"""

from __future__ import annotations

import json
from typing import Any

from frameworks import API_KEY, MODEL, SYSTEM_PROMPT, TOOL_FUNCTIONS, FrameworkConfig, FrameworkRun

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "Get the current weather for a location.",
     "parameters": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}}},
    {"type": "function", "function": {"name": "get_time", "description": "Get the current local time in a city.",
     "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "book_table", "description": "Book a restaurant table.",
     "parameters": {"type": "object", "properties": {"restaurant": {"type": "string"},
                    "party_size": {"type": "integer"}}, "required": ["restaurant", "party_size"]}}},
]  # fmt: skip


def _execute(name: str, arguments: str) -> str:
    functions = {f.__name__: f for f in TOOL_FUNCTIONS}
    try:
        value = json.loads(arguments)
        if not isinstance(value, dict):
            raise ValueError("not a JSON object")
        return functions[name](**value)
    except Exception as exc:  # the model gets the error back
        return f"Error: ToolArgumentsError: {type(exc).__name__}: {exc}"


def _run(pipeline: Any, base_url: str, user_text: str, streaming: bool) -> FrameworkRun:
    import litellm
    from litellm.integrations.opentelemetry import OpenTelemetry

    tp = pipeline.make_tracer_provider()
    litellm.callbacks = [OpenTelemetry(tracer_provider=tp)]
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user_text}]
    kwargs = {"model": f"openai/{MODEL}", "api_base": base_url, "api_key": API_KEY, "tools": TOOLS, "num_retries": 0}
    with tp.get_tracer("capture").start_as_current_span("agent run"):
        for _ in range(8):
            if streaming:
                chunks = list(litellm.completion(messages=messages, stream=True, **kwargs))
                response = litellm.stream_chunk_builder(chunks, messages=messages)
            else:
                response = litellm.completion(messages=messages, **kwargs)
            message = response.choices[0].message
            calls = message.tool_calls or []
            if not calls:
                _flush_callbacks()
                return FrameworkRun(message.content)
            messages.append({"role": "assistant", "content": message.content, "tool_calls": [
                {"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments}}
                for c in calls]})  # fmt: skip
            for c in calls:
                messages.append({"role": "tool", "tool_call_id": c.id, "content": _execute(c.function.name, c.function.arguments)})
    _flush_callbacks()
    return FrameworkRun(None, "RuntimeError: no final answer after 8 turns")


def _flush_callbacks() -> None:
    """LiteLLM logs success callbacks on a background thread: wait for them before the
    providers are shut down, so no span is lost."""
    import time

    import litellm

    executor = getattr(litellm, "_thread_pool_executor", None) or getattr(
        __import__("litellm.litellm_core_utils.thread_pool_executor", fromlist=["x"]), "executor", None
    )
    if executor is not None:
        executor.shutdown(wait=True)
    time.sleep(1.0)


CONFIG = FrameworkConfig(
    name="litellm",
    framework="litellm",
    description="LiteLLM completion (openai/ provider) in a hand-written loop, traced by LiteLLM's own "
    "OpenTelemetry callback (litellm.integrations.opentelemetry.OpenTelemetry)",
    env={"LITELLM_LOCAL_MODEL_COST_MAP": "True", "USE_OTEL_LITELLM_REQUEST_SPAN": "true"},
    packages=["litellm", "openai", "opentelemetry-api", "opentelemetry-sdk"],
    run=_run,
    notes=[
        "LITELLM_LOCAL_MODEL_COST_MAP=True keeps litellm from fetching its price list",
        "USE_OTEL_LITELLM_REQUEST_SPAN=true: inside a span of the application's (here `agent run`) LiteLLM "
        "otherwise makes no litellm_request span and writes each request's attributes onto that parent "
        "span, the next request overwriting the last",
    ],
)
