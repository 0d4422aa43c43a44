"""Agent-shaped OTLP workload made by the real OpenTelemetry Python SDK.

Spans are created with the SDK (TracerProvider + InMemorySpanExporter) and encoded
with ``opentelemetry.exporter.otlp.proto.common.trace_encoder.encode_spans`` exactly as
the OTLP/HTTP exporter's BatchSpanProcessor would send them (512 spans per request).

Also provides :func:`to_otlp_json`, a *spec-conformant* OTLP/JSON encoder (hex ids,
integer enums, int64 as strings) used to build the JSON variant of the same requests.
"""

from __future__ import annotations

import base64
import json
import random
from typing import Any

from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Link, SpanKind, Status, StatusCode

BATCH = 512  # BatchSpanProcessor default max_export_batch_size

RESOURCE = Resource.create(
    {
        "service.name": "weather-agent",
        "service.version": "1.4.2",
        "deployment.environment.name": "prod",
        "host.name": "agent-worker-7",
        "process.pid": 4242,
        "gen_ai.agent.name": "WeatherBot",
    }
)

# Mostly ASCII prose with the characters JSON must escape; ~1 word in 60 is non-ASCII
# (real agent transcripts are mostly ASCII, but not all of them).
_WORDS = [
    "the",
    "weather",
    "in",
    "Paris",
    "is",
    "rainy",
    "and",
    "the",
    "user",
    "wants",
    "to",
    "know",
    "whether",
    "to",
    "bring",
    "an",
    "umbrella",
    "for",
    "a",
    "walk",
    "along",
    "river",
    "Seine",
    "tomorrow",
    "afternoon",
    "or",
    "maybe",
    "next",
    "week",
    "if",
    "it",
    "is",
    "sunny",
    '"quoted"',
    "back\\slash",
    "tab\tnew\nline",
] * 12 + ["température", "東京", "☔", "élevée"]


def _text(rng: random.Random, n_chars: int) -> str:
    out: list[str] = []
    size = 0
    while size < n_chars:
        w = rng.choice(_WORDS)
        out.append(w)
        size += len(w) + 1
    return " ".join(out)


def _messages(rng: random.Random, n_bytes: int) -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = [{"role": "system", "parts": [{"type": "text", "content": _text(rng, 200)}]}]
    while len(json.dumps(msgs)) < n_bytes:
        if rng.random() < 0.5:
            msgs.append({"role": "user", "parts": [{"type": "text", "content": _text(rng, 300)}]})
        else:
            msgs.append(
                {
                    "role": "assistant",
                    "parts": [
                        {
                            "type": "tool_call",
                            "id": f"call_{rng.getrandbits(64):016x}",
                            "name": "get_weather",
                            "arguments": {"location": "Paris", "unit": "celsius"},
                        }
                    ],
                }
            )
    return msgs


def _tool_definitions() -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "name": f"tool_{i}",
            "description": "Get the current weather for a location. " * 3,
            "parameters": {
                "type": "object",
                "properties": {
                    "location": {"type": "string", "description": "City and country"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                },
                "required": ["location"],
            },
        }
        for i in range(5)
    ]


TOOL_DEFS = json.dumps(_tool_definitions())  # ~2 KB


def make_spans(n_spans: int, *, structured: bool = False, seed: int = 0) -> list[Any]:
    """Create ``n_spans`` finished SDK spans shaped like an agent loop (deterministic per seed).

    Each agent run = 1 ``invoke_agent`` root + alternating ``chat`` / ``execute_tool``
    children; ~5 % of tool spans fail (status ERROR + ``exception`` event), a few chat
    spans carry a link. ``structured=True`` puts dict/list values (kvlistValue /
    arrayValue) in tool arguments/results and message attributes.
    """
    rng = random.Random(seed)
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=RESOURCE)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("my_agent.loop", "0.1.0")
    made = 0
    while made < n_spans:
        turns = rng.randint(6, 30)
        conv = f"conv_{rng.getrandbits(32):08x}"
        with tracer.start_as_current_span(
            "invoke_agent WeatherBot",
            kind=SpanKind.INTERNAL,
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "WeatherBot",
                "gen_ai.agent.id": "agent_001",
                "gen_ai.conversation.id": conv,
                "gen_ai.provider.name": "openai",
            },
        ) as root:
            made += 1
            prev_ctx = None
            # A coherent conversation, as real producers record it: each chat span's history holds
            # the earlier calls and results, its output the next call, and the execute_tool span
            # that follows carries that call's id and arguments.
            history: list[dict[str, Any]] = [
                {"role": "system", "parts": [{"type": "text", "content": _text(rng, 200)}]},
                {"role": "user", "parts": [{"type": "text", "content": _text(rng, rng.randint(300, 2500))}]},
            ]
            call: dict[str, Any] = {}
            for t in range(turns):
                if made >= n_spans:
                    break
                if t % 2 == 0:
                    msgs = list(history)
                    call = {"type": "tool_call", "id": f"call_{conv}_{t}", "name": "get_weather",
                            "arguments": {"location": "Paris", "day": t}}  # fmt: skip
                    out = [{"role": "assistant", "parts": [call], "finish_reason": "tool_calls"}]
                    links = [Link(prev_ctx)] if (prev_ctx is not None and rng.random() < 0.05) else []
                    with tracer.start_as_current_span("chat gpt-4o", kind=SpanKind.CLIENT, links=links) as s:
                        s.set_attributes(
                            {
                                "gen_ai.operation.name": "chat",
                                "gen_ai.provider.name": "openai",
                                "gen_ai.request.model": "gpt-4o",
                                "gen_ai.response.model": "gpt-4o-2024-08-06",
                                "gen_ai.response.id": f"chatcmpl-{rng.getrandbits(64):x}",
                                "gen_ai.usage.input_tokens": rng.randint(100, 9000),
                                "gen_ai.usage.output_tokens": rng.randint(5, 900),
                                "gen_ai.request.temperature": 0.7,
                                "gen_ai.response.finish_reasons": ["tool_calls"],
                                "gen_ai.conversation.id": conv,
                                "server.address": "api.openai.com",
                                "server.port": 443,
                            }
                        )
                        if structured:
                            s.set_attribute("gen_ai.input.messages", msgs[:4])  # type: ignore[arg-type]
                            s.set_attribute("gen_ai.output.messages", out)  # type: ignore[arg-type]
                        else:
                            s.set_attribute("gen_ai.input.messages", json.dumps(msgs, ensure_ascii=False))
                            s.set_attribute("gen_ai.output.messages", json.dumps(out))
                        s.set_attribute("gen_ai.tool.definitions", TOOL_DEFS)
                        prev_ctx = s.get_span_context()
                else:
                    fail = rng.random() < 0.05
                    args: dict[str, Any] = call["arguments"]
                    result: dict[str, Any] = {"conditions": "rainy", "temp_c": 14.5, "ok": True}
                    with tracer.start_as_current_span(
                        "execute_tool get_weather",
                        kind=SpanKind.INTERNAL,
                        record_exception=False,
                        set_status_on_exception=False,
                    ) as s:
                        s.set_attributes(
                            {
                                "gen_ai.operation.name": "execute_tool",
                                "gen_ai.tool.name": "get_weather",
                                "gen_ai.tool.call.id": call["id"],
                                "gen_ai.tool.type": "function",
                                "gen_ai.tool.description": "Get the current weather",
                                "gen_ai.conversation.id": conv,
                            }
                        )
                        if structured:
                            s.set_attribute("gen_ai.tool.call.arguments", args)  # type: ignore[arg-type]
                            s.set_attribute("gen_ai.tool.call.result", result)  # type: ignore[arg-type]
                        else:
                            s.set_attribute("gen_ai.tool.call.arguments", json.dumps(args))
                            s.set_attribute("gen_ai.tool.call.result", json.dumps(result))
                        if fail:
                            try:
                                raise ValueError("bad arg: location 'Pariss' not found")
                            except ValueError as e:
                                s.record_exception(e)
                                s.set_status(Status(StatusCode.ERROR, f"ValueError: {e}"))
                                s.set_attribute("error.type", "ValueError")
                    history.append({"role": "assistant", "parts": [call]})
                    history.append({"role": "tool", "parts": [{"type": "tool_call_response", "id": call["id"],
                                                               "response": json.dumps(result)}]})  # fmt: skip
                made += 1
            root.set_attribute("gen_ai.usage.input_tokens", 12345)
    provider.shutdown()
    return list(exporter.get_finished_spans())[:n_spans]


def encode_requests(spans: list[Any], batch: int = BATCH) -> list[bytes]:
    """Encode spans into OTLP protobuf request bodies of ``batch`` spans each."""
    return [encode_spans(spans[i : i + batch]).SerializeToString() for i in range(0, len(spans), batch)]


def make_requests(n_requests: int, *, structured: bool = False, seed: int = 0) -> list[bytes]:
    return encode_requests(make_spans(n_requests * BATCH, structured=structured, seed=seed))


# --------------------------------------------------------------------------- OTLP/JSON
_ID_KEYS = {"traceId", "spanId", "parentSpanId"}


def _hexify(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {
            k: (base64.b64decode(v).hex() if k in _ID_KEYS and isinstance(v, str) else _hexify(v))
            for k, v in obj.items()
        }
    if isinstance(obj, list):
        return [_hexify(x) for x in obj]
    return obj


def to_otlp_json(body: bytes, kind: str = "traces") -> bytes:
    """protobuf body → spec OTLP/JSON (hex ids, int enums, int64 strings)."""
    cls = ExportTraceServiceRequest if kind == "traces" else ExportLogsServiceRequest
    msg = cls.FromString(body)
    d = json_format.MessageToDict(msg, use_integers_for_enums=True)
    return json.dumps(_hexify(d), ensure_ascii=False).encode()


def make_log_requests(n_records: int, seed: int = 0) -> list[bytes]:
    """GenAI-ish log records (event_name + structured body) via the SDK's log encoder."""
    from opentelemetry._logs import SeverityNumber
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor

    rng = random.Random(seed)
    exp = InMemoryLogRecordExporter()
    lp = LoggerProvider(resource=RESOURCE)
    lp.add_log_record_processor(SimpleLogRecordProcessor(exp))
    logger = lp.get_logger("my_agent.loop", "0.1.0")
    spans = make_spans(64, seed=seed)
    for i in range(n_records):
        ctx_span = spans[i % len(spans)]
        from opentelemetry import trace as _t
        from opentelemetry.context import Context

        ctx = _t.set_span_in_context(_t.NonRecordingSpan(ctx_span.get_span_context()), Context())
        logger.emit(
            event_name="gen_ai.client.inference.operation.details",
            body={"input": _messages(rng, 500), "output": [{"role": "assistant", "parts": []}]},
            attributes={"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o"},
            severity_number=SeverityNumber.INFO,
            severity_text="INFO",
            context=ctx if i % 7 else Context(),
        )
    lp.shutdown()
    data = list(exp.get_finished_logs())
    return [encode_logs(data[i : i + BATCH]).SerializeToString() for i in range(0, len(data), BATCH)]
