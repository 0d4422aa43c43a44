"""A toy producer no convention knows, written with the real OpenTelemetry SDK (issue 32).

It records its tool calls the way the Vercel AI SDK's `experimental_telemetry` does — `ai.toolCall`
spans with `ai.toolCall.name/id/args`, the model's calls as JSON in `ai.response.toolCalls`, the
tools offered in `ai.prompt.tools` — and, in a second trace, the way LiteLLM's OTel callback records
an old-style function call on a chat span that a known convention claims
(`gen_ai.completion.N.function_call.*`). Nothing here is hand-typed OTLP: the SDK builds the spans,
its OTLP encoder writes the protobuf request `traceladder ingest` reads, exactly as a collector's
file would hold it.
"""

from __future__ import annotations

import json
from pathlib import Path

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "weather in a city",
     "parameters": {"type": "object", "properties": {"location": {"type": "string"}},
                    "required": ["location"], "additionalProperties": False}}},
    {"type": "function", "function": {"name": "book_table", "description": "book a table",
     "parameters": {"type": "object", "properties": {"restaurant": {"type": "string"},
                    "party_size": {"type": "integer"}},
                    "required": ["restaurant", "party_size"], "additionalProperties": False}}},
]  # fmt: skip
# (tool, call id, the model's argument text): a clean call, a schema-violating one, invalid JSON
CALLS = [
    ("get_weather", "call_a1", '{"location": "Paris"}'),
    ("book_table", "call_a2", '{"restaurant": "Chez Nous", "party_size": "four"}'),
    ("get_weather", "call_a3", '{"location": "Par'),
]


def _provider() -> tuple[TracerProvider, InMemorySpanExporter]:
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "toy-producer"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    return provider, memory


def vercel_like(provider: TracerProvider, prefix: str = "ai") -> None:
    """One generateText run: one model step asking for the three calls, each run as an ai.toolCall
    (the AI SDK 4 spelling: `args`, `toolCallType`). `prefix` renames every span, attribute and the
    tracer scope (`unknown_like`)."""
    tracer = provider.get_tracer(prefix)
    tool_calls = [
        {"toolCallType": "function", "toolCallId": i, "toolName": n, "args": a} for n, i, a in CALLS
    ]
    with tracer.start_as_current_span(f"{prefix}.generateText", attributes={
        f"{prefix}.operationId": f"{prefix}.generateText",
        f"{prefix}.prompt": json.dumps({"prompt": "Weather in Paris, then book"}),
    }):  # fmt: skip
        with tracer.start_as_current_span(f"{prefix}.generateText.doGenerate", attributes={
            f"{prefix}.operationId": f"{prefix}.generateText.doGenerate", f"{prefix}.model.id": "toy-model",
            f"{prefix}.prompt.tools": [json.dumps(t["function"]) for t in TOOLS],
            f"{prefix}.response.toolCalls": json.dumps(tool_calls), f"{prefix}.response.finishReason": "tool-calls",
        }):  # fmt: skip
            pass
        for name, call_id, args in CALLS:
            with tracer.start_as_current_span(f"{prefix}.toolCall", attributes={
                f"{prefix}.operationId": f"{prefix}.toolCall", f"{prefix}.toolCall.name": name,
                f"{prefix}.toolCall.id": call_id, f"{prefix}.toolCall.args": args,
                f"{prefix}.toolCall.result": '"ok"',
            }):  # fmt: skip
                pass


def unknown_like(provider: TracerProvider) -> None:
    """The Vercel-like run under a name no convention knows (`acme.toolCall`, scope `acme`): since
    the vercel_ai convention reads the real one, this is the producer nobody reads."""
    vercel_like(provider, prefix="acme")


def litellm_like(provider: TracerProvider) -> None:
    """A run whose first call a known convention reads (an OTel GenAI execute_tool span) and whose
    second — schema-violating — only an old-style function_call attribute records."""
    tracer = provider.get_tracer("litellm")
    with tracer.start_as_current_span(
        "invoke_agent toy", attributes={"gen_ai.operation.name": "invoke_agent"}
    ):
        with tracer.start_as_current_span("execute_tool get_weather", attributes={
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
            "gen_ai.tool.call.id": "call_b1", "gen_ai.tool.call.arguments": '{"location": "Paris"}',
        }):  # fmt: skip
            pass
        with tracer.start_as_current_span("litellm_request", attributes={
            "gen_ai.system": "openai", "llm.request.type": "chat", "gen_ai.request.model": "toy-model",
            "gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.finish_reason": "function_call",
            "gen_ai.completion.0.function_call.name": "book_table",
            "gen_ai.completion.0.function_call.arguments": '{"restaurant": "Chez Nous", "party_size": "four"}',
        }):  # fmt: skip
            pass


def known_shape(provider: TracerProvider) -> None:
    """A control: a run every call of which a convention reads (OTel GenAI execute_tool spans)."""
    tracer = provider.get_tracer("known")
    with tracer.start_as_current_span(
        "invoke_agent toy", attributes={"gen_ai.operation.name": "invoke_agent"}
    ), tracer.start_as_current_span("execute_tool get_weather", attributes={
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
        "gen_ai.tool.call.id": "call_c1", "gen_ai.tool.call.arguments": '{"location": "Paris"}',
    }):  # fmt: skip
        pass


def names_only(provider: TracerProvider) -> None:
    """A producer that records each execution's tool and call id but never its arguments (as
    AutoGen AgentChat does)."""
    tracer = provider.get_tracer("names-only")
    with tracer.start_as_current_span(
        "invoke_agent toy", attributes={"gen_ai.operation.name": "invoke_agent"}
    ):
        for name, call_id, _ in CALLS[:2]:
            attrs = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": name,
                "gen_ai.tool.call.id": call_id,
            }
            with tracer.start_as_current_span(f"execute_tool {name}", attributes=attrs):
                pass


def repr_only(provider: TracerProvider) -> None:
    """A producer that keeps the model's calls only inside Python reprs: one a literal (a list of
    dicts), one not (an SDK object's repr)."""
    tracer = provider.get_tracer("repr-only")
    literal = repr([{"role": "assistant", "tool_calls": [
        {"id": "call_r1", "type": "function", "function": {"name": "get_weather", "arguments": '{"location": "Paris"}'}}
    ]}])  # fmt: skip
    not_literal = (
        "CreateResult(finish_reason='function_calls', content=[FunctionCall(id='call_r2', "
        """arguments='{"restaurant": "Chez Nous", "party_size": "four"}', name='book_table')])"""
    )
    with tracer.start_as_current_span(
        "agent.run", attributes={"agent.messages": literal, "agent.result": not_literal}
    ):
        pass


def write(path: Path, *producers: str) -> dict[str, str]:
    """Runs the named producers (the functions above) and writes their
    spans as one OTLP/protobuf request to `path`; returns producer → trace id (hex)."""
    provider, memory = _provider()
    ids = {}
    for name in producers:
        before = len(memory.get_finished_spans())
        globals()[name](provider)
        ids[name] = format(memory.get_finished_spans()[before].context.trace_id, "032x")
    path.write_bytes(encode_spans(memory.get_finished_spans()).SerializeToString())
    provider.shutdown()
    return ids


def tools_file(path: Path) -> Path:
    path.write_text(json.dumps(TOOLS))
    return path
