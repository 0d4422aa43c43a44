"""Producer configurations: which real instrumentation package traces the agent loop.

Each config sets its environment variables (before any instrumentation is imported),
builds the SDK pipeline that exports to the capture sink, instruments ``openai`` and
returns a ``Telemetry`` that opens the producer's own agent/tool spans through the
producer's public API (util-genai handler, OpenInference OITracer, Traceloop decorators).

Every trace pipeline has three exporters on the same spans:
  * the real OTLP/HTTP protobuf exporter  -> sink ``/v1/traces``      (``traces-NNN.pb``)
  * the real OTLP/HTTP JSON exporter       -> sink ``/json/v1/traces`` (``traces.json``)
  * the real OTLP JSON-lines file exporter -> ``collector-traces.jsonl``
and the same three for logs where the producer emits log records.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent import MODEL, AgentResult, Telemetry, ToolCall

AGENT_NAME = "travel-agent"

# Every BatchSpanProcessor / BatchLogRecordProcessor (ours and Traceloop's own) exports
# only on force_flush, so the protobuf and the JSON exporters see identical batches.
COMMON_ENV = {
    "OTEL_BSP_SCHEDULE_DELAY": "600000",
    "OTEL_BLRP_SCHEDULE_DELAY": "600000",
}


@dataclass
class Pipeline:
    sink_url: str
    workdir: Path
    service_name: str
    tracer_provider: Any = None
    logger_provider: Any = None
    span_processors: list[Any] = field(default_factory=list)
    log_processors: list[Any] = field(default_factory=list)

    def resource(self) -> Any:
        from opentelemetry.sdk.resources import Resource

        return Resource.create({"service.name": self.service_name, "service.version": "1.0"})

    def new_span_processors(self, protobuf: bool = True) -> list[Any]:
        from opentelemetry.exporter.otlp.json.file import FileSpanExporter
        from opentelemetry.exporter.otlp.json.http.trace_exporter import OTLPSpanExporter as JsonSpanExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        procs = [
            BatchSpanProcessor(JsonSpanExporter(endpoint=f"{self.sink_url}/json/v1/traces")),
            BatchSpanProcessor(FileSpanExporter(path=self.workdir / "collector-traces.jsonl")),
        ]
        if protobuf:
            procs.insert(0, BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{self.sink_url}/v1/traces")))
        self.span_processors.extend(procs)
        return procs

    def make_tracer_provider(self) -> Any:
        from opentelemetry.sdk.trace import TracerProvider

        tp = TracerProvider(resource=self.resource())
        for proc in self.new_span_processors():
            tp.add_span_processor(proc)
        self.tracer_provider = tp
        return tp

    def make_logger_provider(self) -> Any:
        from opentelemetry.exporter.otlp.json.file._log_exporter import FileLogExporter
        from opentelemetry.exporter.otlp.json.http._log_exporter import OTLPLogExporter as JsonLogExporter
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
        from opentelemetry.sdk._logs import LoggerProvider
        from opentelemetry.sdk._logs.export import BatchLogRecordProcessor

        lp = LoggerProvider(resource=self.resource())
        for exporter in (
            OTLPLogExporter(endpoint=f"{self.sink_url}/v1/logs"),
            JsonLogExporter(endpoint=f"{self.sink_url}/json/v1/logs"),
            FileLogExporter(path=self.workdir / "collector-logs.jsonl"),
        ):
            proc = BatchLogRecordProcessor(exporter)
            lp.add_log_record_processor(proc)
            self.log_processors.append(proc)
        self.logger_provider = lp
        return lp

    def shutdown(self) -> None:
        """Flush everything, traces first, then shut the exporters down."""
        if self.tracer_provider is not None:
            self.tracer_provider.force_flush()
            self.tracer_provider.shutdown()
        if self.logger_provider is not None:
            self.logger_provider.force_flush()
            self.logger_provider.shutdown()


@dataclass
class ProducerConfig:
    name: str
    description: str
    env: dict[str, str]
    packages: list[str]  # distributions whose versions are recorded in expected.json
    setup: Callable[[Pipeline], Telemetry]


# --- OpenTelemetry util-genai (execute_tool / invoke_agent) ---------------------------------
class UtilGenAITelemetry(Telemetry):
    """Agent and tool spans through ``opentelemetry-util-genai``'s TelemetryHandler."""

    def __init__(self, handler: Any, legacy_api: bool) -> None:
        self.handler = handler
        self.legacy_api = legacy_api  # util-genai 0.4b0 API vs 1.x API

    def run_agent(self, user_text: str, body: Callable[[], AgentResult]) -> AgentResult:
        if self.legacy_api:
            cm = self.handler.invoke_local_agent("openai", request_model=MODEL)
        else:
            cm = self.handler.invoke_local_agent(request_model=MODEL, agent_name=AGENT_NAME)
        with cm as inv:
            if self.legacy_api:
                inv.agent_name = AGENT_NAME
            return body()

    def run_tool(self, call: ToolCall, execute: Callable[[], str]) -> str:
        if self.legacy_api:
            cm = self.handler.tool(
                call.name,
                arguments=call.arguments_raw,
                tool_call_id=call.id,
                tool_type="function",
                tool_description=call.description,
            )
        else:
            cm = self.handler.tool(call.name, tool_type="function")
        with cm as inv:
            if not self.legacy_api:
                inv.tool_call_id = call.id
                inv.tool_description = call.description
                if inv.should_capture_content:
                    inv.arguments = call.arguments_raw  # raw model string, recorded as-is
            result = execute()
            inv.tool_result = result
            return result


def _setup_openai_v2(p: Pipeline) -> Telemetry:
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
    from opentelemetry.util.genai.handler import TelemetryHandler

    tp = p.make_tracer_provider()
    lp = p.make_logger_provider()
    OpenAIInstrumentor().instrument(tracer_provider=tp, logger_provider=lp)
    return UtilGenAITelemetry(TelemetryHandler(tracer_provider=tp, logger_provider=lp), legacy_api=True)


def _setup_genai_openai(p: Pipeline) -> Telemetry:
    from opentelemetry.instrumentation.genai.openai import OpenAIInstrumentor
    from opentelemetry.util.genai.handler import TelemetryHandler

    tp = p.make_tracer_provider()
    lp = p.make_logger_provider()
    OpenAIInstrumentor().instrument(tracer_provider=tp, logger_provider=lp)
    return UtilGenAITelemetry(TelemetryHandler(tracer_provider=tp, logger_provider=lp), legacy_api=False)


# --- OpenInference ---------------------------------------------------------------------------
class OpenInferenceTelemetry(Telemetry):
    def __init__(self, tracer: Any) -> None:
        self.tracer = tracer

    def run_agent(self, user_text: str, body: Callable[[], AgentResult]) -> AgentResult:
        with self.tracer.start_as_current_span(AGENT_NAME, openinference_span_kind="agent") as span:
            span.set_input(user_text)
            result = body()
            span.set_output(result.final_text)
            return result

    def run_tool(self, call: ToolCall, execute: Callable[[], str]) -> str:
        with self.tracer.start_as_current_span(call.name, openinference_span_kind="tool") as span:
            span.set_tool(
                name=call.name, description=call.description, parameters=call.parameters_schema or {}
            )
            span.set_input(call.arguments_raw, mime_type="application/json")
            result = execute()
            span.set_output(result, mime_type="application/json")
            return result


def _setup_openinference(p: Pipeline) -> Telemetry:
    from openinference.instrumentation import OITracer, TraceConfig
    from openinference.instrumentation.openai import OpenAIInstrumentor

    tp = p.make_tracer_provider()
    OpenAIInstrumentor().instrument(tracer_provider=tp)
    tracer = OITracer(tp.get_tracer("traceladder.capture.agent"), config=TraceConfig())
    return OpenInferenceTelemetry(tracer)


# --- OpenLLMetry / Traceloop -----------------------------------------------------------------
class TraceloopTelemetry(Telemetry):
    def __init__(self) -> None:
        from traceloop.sdk.decorators import agent, tool

        self._agent = agent
        self._tool = tool

    def run_agent(self, user_text: str, body: Callable[[], AgentResult]) -> AgentResult:
        @self._agent(name=AGENT_NAME)
        def travel_agent(question: str) -> str | None:
            result = body()
            travel_agent.result = result  # type: ignore[attr-defined]
            return result.final_text

        travel_agent(user_text)
        return travel_agent.result  # type: ignore[attr-defined]

    def tool_impl(self, name: str, fn: Callable[..., str]) -> Callable[..., str]:
        return self._tool(name=name)(fn)


def _setup_traceloop(p: Pipeline) -> Telemetry:
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from traceloop.sdk import Traceloop
    from traceloop.sdk.instruments import Instruments

    Traceloop.init(
        app_name=p.service_name,
        resource_attributes={"service.version": "1.0"},
        exporter=OTLPSpanExporter(endpoint=f"{p.sink_url}/v1/traces"),
        instruments={Instruments.OPENAI},
        telemetry_enabled=False,
    )
    # Traceloop installed its own provider (+ a BatchSpanProcessor around our protobuf
    # exporter); add the two JSON exporters to that same provider.
    tp = trace.get_tracer_provider()
    for proc in p.new_span_processors(protobuf=False):
        tp.add_span_processor(proc)
    p.tracer_provider = tp
    return TraceloopTelemetry()


CONTENT_TRUE = {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"}
OTEL_V2_PKGS = [
    "opentelemetry-instrumentation-openai-v2",
    "opentelemetry-util-genai",
    "opentelemetry-instrumentation",
    "opentelemetry-semantic-conventions",
]
CORE_PKGS = [
    "openai",
    "opentelemetry-api",
    "opentelemetry-sdk",
    "opentelemetry-exporter-otlp-proto-http",
    "opentelemetry-exporter-otlp-json-http",
    "opentelemetry-exporter-otlp-json-file",
    "httpx",
    "httpx2",
]
TRACELOOP_PKGS = [
    "opentelemetry-instrumentation-openai",
    "traceloop-sdk",
    "opentelemetry-semantic-conventions-ai",
]

PRODUCERS: dict[str, ProducerConfig] = {
    c.name: c
    for c in [
        ProducerConfig(
            name="otel-openai-v2-default",
            description="opentelemetry-instrumentation-openai-v2, default (legacy v1.30) conventions, "
            "content capture on: messages only in deprecated per-message log records",
            env={**CONTENT_TRUE},
            packages=OTEL_V2_PKGS + CORE_PKGS,
            setup=_setup_openai_v2,
        ),
        ProducerConfig(
            name="otel-openai-v2-experimental",
            description="opentelemetry-instrumentation-openai-v2 with gen_ai_latest_experimental and "
            "span_and_event content capture: gen_ai.input/output.messages on spans and in "
            "gen_ai.client.inference.operation.details log events",
            env={
                "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
                "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_and_event",
            },
            packages=OTEL_V2_PKGS + CORE_PKGS,
            setup=_setup_openai_v2,
        ),
        ProducerConfig(
            name="otel-genai-openai",
            description="opentelemetry-instrumentation-genai-openai (successor of openai-v2), span_only "
            "content capture",
            env={"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_only"},
            packages=[
                "opentelemetry-instrumentation-genai-openai",
                "opentelemetry-util-genai",
                "opentelemetry-instrumentation",
                "opentelemetry-semantic-conventions",
            ]
            + CORE_PKGS,
            setup=_setup_genai_openai,
        ),
        ProducerConfig(
            name="openinference",
            description="openinference-instrumentation-openai + OITracer AGENT/TOOL spans",
            env={},
            packages=[
                "openinference-instrumentation-openai",
                "openinference-instrumentation",
                "openinference-semantic-conventions",
            ]
            + CORE_PKGS,
            setup=_setup_openinference,
        ),
        ProducerConfig(
            name="openllmetry",
            description="Traceloop opentelemetry-instrumentation-openai (current) via Traceloop.init + "
            "@agent/@tool decorators",
            env={"TRACELOOP_TELEMETRY": "false", "TRACELOOP_TRACE_CONTENT": "true"},
            packages=TRACELOOP_PKGS + CORE_PKGS,
            setup=_setup_traceloop,
        ),
        ProducerConfig(
            name="openllmetry-legacy",
            description="Traceloop opentelemetry-instrumentation-openai, last release with flat "
            "gen_ai.prompt.{i}.* / gen_ai.completion.{i}.* / llm.request.functions.{i}.* attributes",
            env={"TRACELOOP_TELEMETRY": "false", "TRACELOOP_TRACE_CONTENT": "true"},
            packages=TRACELOOP_PKGS + CORE_PKGS,
            setup=_setup_traceloop,
        ),
    ]
}


def apply_env(config: ProducerConfig) -> dict[str, str]:
    env = {**COMMON_ENV, **config.env}
    os.environ.update(env)
    return env
