"""A suite run's tracing: the tracer provider writing the run's spans into the store, flushed
before each case's row is recorded (a case is durable only with its spans) and shut at the end."""

from __future__ import annotations

from opentelemetry.sdk.trace.export import SpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.trace import Tracer

from traceladder.instrumentation.tracing import TRACER_NAME, make_tracer_provider
from traceladder.produce.agent.run_record import write_failed
from traceladder.store.db import Store
from traceladder.store.exporter import DuckDBSpanExporter


class SuiteTracing:
    """The spans of run `run_id` into `store` (plus `extra_exporters`, e.g. a test's in-memory
    one); `id_generator` fixes trace and span ids where a test needs them."""

    def __init__(
        self, store: Store, run_id: str, *, id_generator: IdGenerator | None = None,
        extra_exporters: tuple[SpanExporter, ...] = (),
    ) -> None:  # fmt: skip
        self.run_id = run_id
        self.exporter = DuckDBSpanExporter(store)
        self.provider = make_tracer_provider(
            self.exporter, id_generator=id_generator, extra_exporters=extra_exporters
        )
        self.tracer: Tracer = self.provider.get_tracer(TRACER_NAME)

    def flush(self) -> None:
        """The finished case's spans are in the store before its row says "done"; `StoreError`
        when the exporter could not write them."""
        self.provider.force_flush()
        if self.exporter.error is not None:
            raise write_failed(self.run_id, self.exporter.error)

    def close(self) -> None:
        self.provider.force_flush()
        self.provider.shutdown()
