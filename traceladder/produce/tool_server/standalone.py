"""The cases of a tool server that is not part of a run (`tools serve --db`): each case id gets its
own sandbox, fresh and kept for the server's life, and a `ToolBox` recording into `tracer`.

A call's parent span: the caller's (`_meta.traceparent`, per request); else the server's
`traceparent` (stdio: the `TRACEPARENT` it was started with); else one root span per case,
`tools {case_id}`, carrying `traceladder.case.id` and `traceladder.domain` — so the case's calls
share one trace, and the trace is judged against that case like any case-tagged trace
(docs/live.md). Those roots end at `close()`.
"""

from __future__ import annotations

import threading
import time

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, Tracer
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from traceladder.errors import UserError
from traceladder.instrumentation import semconv as sc
from traceladder.produce.subject.toolbox import ToolBox
from traceladder.produce.tool_server.cases import LocalCase
from traceladder.suite.domain.base import Domain

MAX_CASES = 10_000  # a server is for one suite's cases; more is a client minting ids in a loop


def parent_from_traceparent(traceparent: str | None) -> Context | None:
    """The span context a W3C `traceparent` names; None when absent. `UserError` when malformed:
    spans that silently started a trace of their own would land outside the case."""
    if not traceparent:
        return None
    context = TraceContextTextMapPropagator().extract({"traceparent": traceparent})
    if not trace.get_current_span(context).get_span_context().is_valid:
        raise UserError(
            f"TRACEPARENT {traceparent[:80]!r} is not a W3C traceparent (00-<32 hex>-<16 hex>-<2 hex>)"
        )
    return context


class StandaloneCases:
    """`cases(case_id) -> LocalCase`, creating each case's sandbox and toolbox on first use."""

    def __init__(self, domain: Domain, tracer: Tracer, parent: Context | None = None) -> None:
        self._domain, self._tracer, self._parent = domain, tracer, parent
        self._cases: dict[str, LocalCase] = {}
        self._roots: list[Span] = []
        self._lock = threading.Lock()

    def __call__(self, case_id: str) -> LocalCase | None:
        with self._lock:
            case = self._cases.get(case_id)
            if case is not None or len(self._cases) >= MAX_CASES:
                return case
            parent = self._parent
            if parent is None:
                root = self._tracer.start_span(
                    f"tools {case_id}", kind=SpanKind.SERVER,
                    attributes={sc.CASE_ID: case_id, sc.DOMAIN: self._domain.name}, start_time=time.time_ns(),
                )  # fmt: skip
                self._roots.append(root)
                parent = trace.set_span_in_context(root)
            conversation = f"tools/{case_id}"
            toolbox = ToolBox(self._domain, self._domain.new_sandbox(), self._tracer, conversation)
            case = self._cases[case_id] = LocalCase(toolbox, parent)
            return case

    def close(self) -> None:
        """End the cases' own root spans (exported with the provider's next flush)."""
        with self._lock:
            for root in self._roots:
                root.end()
            self._roots.clear()
