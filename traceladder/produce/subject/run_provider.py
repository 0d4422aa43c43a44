"""The process's global tracer provider while a Python agent under test runs: set once, it hands
each span to the provider of the run in progress.

A Python agent's own instrumentation takes its tracers from OpenTelemetry's global provider, often
at import time. OpenTelemetry lets a process set that provider once ("Overriding of current
TracerProvider is not allowed"), and a tracer taken from it stays bound to the provider it first
resolved. Each run has a provider of its own (its exporter writes that run's spans), and `baseline
init --agent` runs the same agent N times in one process: with the global provider set per run,
runs 2..N lost every span the agent's instrumentation started (measured on
`tests/subject/agents/traced_async.py`: 54, 0 and 0 step spans for three runs of the same cases).
So the global provider is `RunTracerProvider`, set the first time, and each run points it at its
own (`use`); a tracer it gave out forwards every span to the provider in use when the span starts.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Span, Tracer, TracerProvider
from opentelemetry.util.types import Attributes


class RunTracerProvider(TracerProvider):
    """A provider whose tracers forward to the provider `use` last named (a no-op one before)."""

    def __init__(self) -> None:
        self.current: TracerProvider = trace.NoOpTracerProvider()

    def use(self, provider: TracerProvider) -> None:
        self.current = provider

    def get_tracer(
        self,
        instrumenting_module_name: str,
        instrumenting_library_version: str | None = None,
        schema_url: str | None = None,
        attributes: Attributes = None,
    ) -> Tracer:
        return _ForwardingTracer(
            self, (instrumenting_module_name, instrumenting_library_version, schema_url, attributes)
        )


class _ForwardingTracer(Tracer):
    """A tracer of the provider in use when each span starts (the last one's tracer is kept)."""

    def __init__(self, owner: RunTracerProvider, identity: tuple[Any, ...]) -> None:
        self.owner, self.identity = owner, identity
        self.last: tuple[TracerProvider, Tracer] | None = None

    def _tracer(self) -> Tracer:
        provider, last = self.owner.current, self.last
        if last is not None and last[0] is provider:
            return last[1]
        tracer = provider.get_tracer(*self.identity)
        self.last = (provider, tracer)
        return tracer

    # Every argument goes through as given (the API's own signatures; `ProxyTracer` does the same).
    def start_span(self, *args: Any, **kwargs: Any) -> Span:
        return self._tracer().start_span(*args, **kwargs)

    @contextmanager
    def start_as_current_span(self, *args: Any, **kwargs: Any) -> Iterator[Span]:  # type: ignore[override]
        with self._tracer().start_as_current_span(*args, **kwargs) as span:
            yield span


def use_for_this_run(provider: TracerProvider) -> None:
    """Make the global provider hand spans to `provider` (this run's) until the next run's call.
    The first call sets the forwarding provider as the process's global one. When the host process
    had already set a provider of its own, that one stays (OpenTelemetry allows one) and the
    agent's spans go where the host sends them, as before a run."""
    current = trace.get_tracer_provider()
    if not isinstance(current, RunTracerProvider):
        trace.set_tracer_provider(RunTracerProvider())
        current = trace.get_tracer_provider()
    if isinstance(current, RunTracerProvider):
        current.use(provider)
