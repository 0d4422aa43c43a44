"""Domains: the tools, fixtures and sandbox an agent is evaluated against."""

from traceladder.domain.base import Domain, LedgerEntry, Sandbox, ToolOutcome

__all__ = ["Domain", "LedgerEntry", "Sandbox", "ToolOutcome"]
