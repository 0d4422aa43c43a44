"""Tracer-provider setup: always our DuckDB exporter, plus OTLP when the standard env vars say so."""

from __future__ import annotations

import os
from collections.abc import Mapping

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator

from traceladder import __version__
from traceladder.instrumentation.semconv import CONVENTIONS, CONVENTIONS_VERSION

TRACER_NAME = "traceladder.agent"
OTLP_ENV_VARS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")


def otlp_configured(env: Mapping[str, str] | None = None) -> bool:
    env = os.environ if env is None else env
    return any(env.get(name) for name in OTLP_ENV_VARS)


def make_tracer_provider(
    store_exporter: SpanExporter,
    *,
    id_generator: IdGenerator | None = None,
    extra_exporters: tuple[SpanExporter, ...] = (),
    env: Mapping[str, str] | None = None,
) -> TracerProvider:
    """A provider that exports to the span store, and to an OTLP/HTTP collector when
    `OTEL_EXPORTER_OTLP_ENDPOINT` / `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set (the exporter reads
    endpoint, headers and timeout from the standard variables itself).

    Our provider is local, never installed as the global one, so embedding traceladder in an
    application that has its own tracing does not hijack it.
    """
    resource = Resource.create(
        {
            "service.name": "traceladder",
            "service.version": __version__,
            CONVENTIONS: CONVENTIONS_VERSION,
        }
    )
    provider = TracerProvider(resource=resource, id_generator=id_generator, shutdown_on_exit=False)
    # Large batches suit DuckDB (one transaction each); the runner also flushes after every case.
    provider.add_span_processor(
        BatchSpanProcessor(
            store_exporter,
            schedule_delay_millis=500,
            max_export_batch_size=4096,
            max_queue_size=65536,
        )
    )
    exporters = list(extra_exporters)
    if otlp_configured(env):
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        exporters.append(OTLPSpanExporter())
    for exporter in exporters:
        provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=500))
    return provider
