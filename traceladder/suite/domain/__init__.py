"""The domain plug-in interface, the registry that resolves `--domain NAME`, and retail/."""

from traceladder.suite.domain.base import ChainSpec, Domain, LedgerEntry, Sandbox, SimHints, ToolOutcome
from traceladder.suite.domain.registry import DEFAULT_DOMAIN, load_domain

__all__ = [
    "DEFAULT_DOMAIN",
    "ChainSpec",
    "Domain",
    "LedgerEntry",
    "Sandbox",
    "SimHints",
    "ToolOutcome",
    "load_domain",
]
