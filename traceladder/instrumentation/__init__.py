"""Instrumentation: pinned GenAI conventions and tracer setup.

`semconv` is the one owner of every attribute and event name we emit or read in the OTel GenAI
convention (and of our own `traceladder.*` names); readers import it without loading the
OpenTelemetry SDK, which only `make_tracer_provider` needs (imported on first use)."""

from typing import TYPE_CHECKING

from traceladder.instrumentation.semconv import CONVENTIONS_VERSION

if TYPE_CHECKING:
    from traceladder.instrumentation.tracing import make_tracer_provider

__all__ = ["CONVENTIONS_VERSION", "make_tracer_provider"]


def __getattr__(name: str) -> object:
    """The tracer setup (the OTel SDK) is imported on first use: the pinned conventions are read
    by commands that never emit a span (`report`, `gate`)."""
    if name == "make_tracer_provider":
        from traceladder.instrumentation.tracing import make_tracer_provider

        return make_tracer_provider
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
