"""`DuckDBSpanExporter`: an OpenTelemetry SpanExporter that writes each batch to the span store."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from traceladder.store.db import Store
from traceladder.store.spans import readable_span_columns, to_arrow
from traceladder.store.writes import write_spans

log = logging.getLogger(__name__)


class DuckDBSpanExporter(SpanExporter):
    """Writes batches in one transaction (Arrow, never row by row). Telemetry never breaks the
    agent: a failed write is logged and reported as FAILURE, not raised into the loop — and kept
    in `error`, so the runner can refuse to call a case finished whose spans are not durable."""

    def __init__(self, store: Store, source: str = "suite") -> None:
        self.store = store
        self.source = source
        self.exported = 0
        self.error: Exception | None = None  # the first failed write; sticky

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        try:
            self.exported += write_spans(self.store, to_arrow(readable_span_columns(spans, self.source)))
        except Exception as exc:
            log.debug("span store write failed for %d spans: %s", len(spans), exc)
            if self.error is None:
                self.error = exc
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        """The store outlives the exporter (the runner closes it)."""

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True
