"""Anthropic Messages API (`tool_use` blocks) on the scripted server's `/v1/messages`
(anthropic_messages.py), with a small agent loop on the real `anthropic` client — the way a team
calls Claude without a framework. Three producers on the same loop:
  * `anthropic-sdk` — the SDK's own OpenTelemetry tracing (`Anthropic(open_telemetry={
    "tracer_provider": tp, "traces": {"content_mode": "content"}})`, scope
    `com.anthropic.sdk.python`);
  * `anthropic-openinference` — `openinference-instrumentation-anthropic`
    (`AnthropicInstrumentor().instrument(tracer_provider=tp)`);
  * `anthropic-openllmetry` — `opentelemetry-instrumentation-anthropic` (Traceloop's, used
    without traceloop-sdk: `AnthropicInstrumentor().instrument(tracer_provider=tp)`,
    `TRACELOOP_TRACE_CONTENT=true`).

The loop: `messages.create` (or, streaming, `messages.stream(...)` and `get_final_message()`) with
the three tools in Anthropic's format (`input_schema`), runs each `tool_use` block with the fake
tools of frameworks/__init__.py, sends every result back as a `tool_result` block in one user
message (`is_error: true` with `ToolArgumentsError: ...` when `input` is not an object), until a
turn has no `tool_use`; the whole loop runs inside one attribute-less span `agent run`, so a run is
one trace. No tool spans: these instrumentations trace the model calls only.
"""

from __future__ import annotations

import inspect
from typing import Any

from frameworks import API_KEY, SYSTEM_PROMPT, TOOL_FUNCTIONS, FrameworkConfig, FrameworkRun

MODEL = "claude-sonnet-4-5"
_TYPES = {str: "string", int: "integer"}


def tool_specs() -> list[dict[str, Any]]:
    """The three tools as Anthropic tool definitions (name, description, input_schema)."""
    out = []
    for f in TOOL_FUNCTIONS:
        params = inspect.signature(f).parameters
        out.append(
            {
                "name": f.__name__,
                "description": (f.__doc__ or "").strip().splitlines()[0],
                "input_schema": {
                    "type": "object",
                    "properties": {n: {"type": _TYPES[p.annotation if not isinstance(p.annotation, str)
                                                      else {"str": str, "int": int}[p.annotation]]}
                                   for n, p in params.items()},  # fmt: skip
                    "required": list(params),
                },
            }
        )
    return out


def _execute(block: Any) -> dict[str, Any]:
    functions = {f.__name__: f for f in TOOL_FUNCTIONS}
    try:
        if not isinstance(block.input, dict):
            raise TypeError(f"ToolArgumentsError: input is not an object: {block.input!r}")
        content, error = functions[block.name](**block.input), False
    except Exception as exc:  # the model gets the error back, as a tool_result with is_error
        content, error = f"Error: {type(exc).__name__}: {exc}", True
    return {"type": "tool_result", "tool_use_id": block.id, "content": content, "is_error": error}


def run_loop(client: Any, user_text: str, streaming: bool, tracer_provider: Any) -> FrameworkRun:
    """The loop inside one plain span (no attributes: nothing a convention reads), so that the
    run is one trace, as an application's request handler would make it."""
    with tracer_provider.get_tracer("capture").start_as_current_span("agent run"):
        return _loop(client, user_text, streaming)


def _loop(client: Any, user_text: str, streaming: bool) -> FrameworkRun:
    messages: list[dict[str, Any]] = [{"role": "user", "content": user_text}]
    tools = tool_specs()
    for _ in range(8):
        kwargs = {"model": MODEL, "max_tokens": 512, "system": SYSTEM_PROMPT, "messages": messages, "tools": tools}
        if streaming:
            with client.messages.stream(**kwargs) as stream:
                for _event in stream:
                    pass
                reply = stream.get_final_message()
        else:
            reply = client.messages.create(**kwargs)
        messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]})
        uses = [b for b in reply.content if b.type == "tool_use"]
        if not uses:
            return FrameworkRun("".join(b.text for b in reply.content if b.type == "text"))
        messages.append({"role": "user", "content": [_execute(b) for b in uses]})
    return FrameworkRun(None, "RuntimeError: no final answer after 8 turns")


def _client(base_url: str, **options: Any) -> Any:
    from anthropic import Anthropic

    return Anthropic(base_url=base_url.removesuffix("/v1"), api_key=API_KEY, max_retries=0, **options)


def _run_sdk(pipeline: Any, base_url: str, user_text: str, streaming: bool) -> FrameworkRun:
    tp = pipeline.make_tracer_provider()
    options = {"tracer_provider": tp, "traces": {"enabled": True, "content_mode": "content"}}
    return run_loop(_client(base_url, open_telemetry=options), user_text, streaming, tp)


def _run_openinference(pipeline: Any, base_url: str, user_text: str, streaming: bool) -> FrameworkRun:
    from openinference.instrumentation.anthropic import AnthropicInstrumentor

    tp = pipeline.make_tracer_provider()
    AnthropicInstrumentor().instrument(tracer_provider=tp)
    return run_loop(_client(base_url), user_text, streaming, tp)


def _run_openllmetry(pipeline: Any, base_url: str, user_text: str, streaming: bool) -> FrameworkRun:
    from opentelemetry.instrumentation.anthropic import AnthropicInstrumentor

    tp = pipeline.make_tracer_provider()
    AnthropicInstrumentor().instrument(tracer_provider=tp)
    return run_loop(_client(base_url), user_text, streaming, tp)


_CORE = ["anthropic", "opentelemetry-api", "opentelemetry-sdk"]
CONFIGS = [
    FrameworkConfig(
        name="anthropic-sdk",
        framework="anthropic",
        description="Anthropic Messages API, a hand-written loop on the anthropic client, traced by the "
        "SDK's own OpenTelemetry option (content_mode=content)",
        env={},
        packages=_CORE,
        run=_run_sdk,
        notes=["content capture: open_telemetry={'traces': {'content_mode': 'content'}} (default metadata_only)"],
    ),
    FrameworkConfig(
        name="anthropic-openinference",
        framework="anthropic",
        description="Anthropic Messages API, a hand-written loop on the anthropic client, traced by "
        "openinference-instrumentation-anthropic",
        env={},
        packages=["openinference-instrumentation-anthropic", "openinference-instrumentation",
                  "openinference-semantic-conventions", *_CORE],  # fmt: skip
        run=_run_openinference,
        notes=["content capture: OpenInference records inputs/outputs by default (TraceConfig())"],
    ),
    FrameworkConfig(
        name="anthropic-openllmetry",
        framework="anthropic",
        description="Anthropic Messages API, a hand-written loop on the anthropic client, traced by "
        "opentelemetry-instrumentation-anthropic (Traceloop's OpenLLMetry, without traceloop-sdk)",
        env={"TRACELOOP_TRACE_CONTENT": "true"},
        packages=["opentelemetry-instrumentation-anthropic", "opentelemetry-semantic-conventions-ai", *_CORE],
        run=_run_openllmetry,
        notes=["content capture: TRACELOOP_TRACE_CONTENT=true (also its default)"],
    ),
]
