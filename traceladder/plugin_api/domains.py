"""The names a domain plug-in uses: a zero-argument callable returning a `Domain` (its tools,
sandbox, suite and simulated-model hints), registered in the `traceladder.domains` entry-point
group and used where `--domain NAME` names it (docs/extending.md). A domain can also be a
directory of data files, with no code (`--domain DIR`)."""

from traceladder.suite.cases.spec import CategorySpec, SuiteSpec, SuiteTotals
from traceladder.suite.domain import ChainSpec, Domain, LedgerEntry, Sandbox, SimHints, ToolOutcome

__all__ = [
    "CategorySpec",
    "ChainSpec",
    "Domain",
    "LedgerEntry",
    "Sandbox",
    "SimHints",
    "SuiteSpec",
    "SuiteTotals",
    "ToolOutcome",
]
