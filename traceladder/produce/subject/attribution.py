"""Keeping every span an agent under test emits in its case's trace, and nothing else.

A case's trace is the one its root span opened. A span arrives either in that trace (the agent's
instrumentation joined the root span: in-process context, or `TRACEPARENT`) or in a trace of its
own, carrying the run and case ids in its resource (`OTEL_RESOURCE_ATTRIBUTES`, which every OTel
SDK honours). The second kind is moved into the case's trace, its own roots made children of the
case's root span, so the ladder reads one trace per case whatever the SDK did. A span that names
no case of this run (another trace, another run) is dropped and counted: it would otherwise be
judged as stray live traffic.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from traceladder.instrumentation import semconv as sc
from traceladder.store.db import Store
from traceladder.store.spans import readable_span_columns, to_arrow
from traceladder.store.writes import write_spans

log = logging.getLogger(__name__)
SOURCE = "agent"  # spans.source of what an agent under test emitted


@dataclass(frozen=True)
class CaseRoot:
    trace_id: str  # 32 hex
    span_id: str  # 16 hex


class CaseTraces:
    """The run's open and finished case traces. Thread-safe."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self._roots: dict[tuple[str, int, int], CaseRoot] = {}  # (case id, repeat, turn) → root
        self._traces: set[str] = set()
        self._lock = threading.Lock()
        self.dropped = 0  # spans that named no case of this run

    def add(self, case_id: str, repeat: int, root: CaseRoot, turn: int = 0) -> None:
        """The root of a case's trace (of its turn `turn`, 0 for a single-turn case)."""
        with self._lock:
            self._roots[(case_id, repeat, turn)] = root
            self._traces.add(root.trace_id)

    def attribute(self, table: pa.Table) -> pa.Table:
        """`table` (span rows) with every span moved into its case's trace; spans of no case of
        this run left out (counted in `dropped`)."""
        if not table.num_rows:
            return table
        trace_ids = table.column("trace_id").to_pylist()
        parents = table.column("parent_span_id").to_pylist()
        resources = table.column("resource").to_pylist()
        keep: list[bool] = []
        with self._lock:
            for i, (trace_id, resource) in enumerate(zip(trace_ids, resources, strict=True)):
                if trace_id in self._traces:
                    keep.append(True)
                    continue
                root = self._roots.get(_case_of(resource, self.run_id) or ("", -1, -1))
                keep.append(root is not None)
                if root is not None:
                    trace_ids[i] = root.trace_id
                    if not parents[i]:
                        parents[i] = root.span_id
            self.dropped += keep.count(False)
        table = table.set_column(
            table.schema.get_field_index("trace_id"), "trace_id", pa.array(trace_ids, pa.string())
        )
        table = table.set_column(
            table.schema.get_field_index("parent_span_id"), "parent_span_id", pa.array(parents, pa.string())
        )
        return table.filter(pa.array(keep, pa.bool_()))


def _case_of(resource: str | None, run_id: str) -> tuple[str, int, int] | None:
    """(case id, repeat, turn) a span's resource names for this run, or None (no turn: 0)."""
    try:
        attrs = json.loads(resource or "{}")
    except ValueError:
        return None
    if not isinstance(attrs, dict) or attrs.get(sc.RUN_ID) != run_id or not attrs.get(sc.CASE_ID):
        return None
    try:
        repeat = int(attrs.get(sc.CASE_REPEAT) or 0)
        turn = int(attrs.get(sc.CASE_TURN) or 0)
    except (TypeError, ValueError):
        return None
    return str(attrs[sc.CASE_ID]), repeat, turn


def write_attributed(store: Store, traces: CaseTraces, spans: pa.Table) -> int:
    """Write the spans that belong to a case of the run (the store's span columns, `source`
    added here); returns how many were kept."""
    if "source" not in spans.column_names:
        spans = spans.append_column("source", pa.array([SOURCE] * spans.num_rows, pa.string()))
    kept = traces.attribute(spans)
    return write_spans(store, kept)


class CaseSpanExporter(SpanExporter):
    """The run's exporter for in-process spans (ours and the agent's): attributed, then written.
    Telemetry never breaks the agent: a failed write is logged, reported as FAILURE and kept in
    `error`, so the run refuses to call a case finished whose spans are not durable."""

    def __init__(self, store: Store, traces: CaseTraces) -> None:
        self.store = store
        self.traces = traces
        self.error: Exception | None = None

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        try:
            write_attributed(self.store, self.traces, to_arrow(readable_span_columns(spans, SOURCE)))
        except Exception as exc:
            log.debug("span store write failed for %d spans: %s", len(spans), exc)
            if self.error is None:
                self.error = exc
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        """The store outlives the exporter."""

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True
