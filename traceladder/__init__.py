"""traceladder: how reliably does your LLM agent call tools?

Spans from an agent loop (or anyone's OTLP traces) land in a DuckDB span store; code evaluators
ordered like a cost ladder settle each trace with the cheapest check that can.
"""

__version__ = "0.1.0"
__all__ = ["__version__"]
