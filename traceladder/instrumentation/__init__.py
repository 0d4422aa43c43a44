"""Instrumentation: pinned GenAI conventions and tracer setup."""

from traceladder.instrumentation.semconv import CONVENTIONS_VERSION
from traceladder.instrumentation.tracing import make_tracer_provider

__all__ = ["CONVENTIONS_VERSION", "make_tracer_provider"]
