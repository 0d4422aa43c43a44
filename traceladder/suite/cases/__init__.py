"""Cases: the CaseV1 model, the suite spec, loader, validator and input hashes. A suite belongs to
its domain (the retail suite ships with the retail domain).

Each name loads with its module on first use: a command that needs one piece (the suite spec for
a domain, the hashes for a baseline) does not pay for the loader and the validator at start-up.
"""

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from traceladder.suite.cases.hashes import input_hashes
    from traceladder.suite.cases.loader import load_cases, suite_path
    from traceladder.suite.cases.model import Case, GoldenCall
    from traceladder.suite.cases.spec import CategorySpec, SuiteSpec, SuiteTotals
    from traceladder.suite.cases.validator import SuiteValidator, Violation, validate_suite

__all__ = [
    "Case",
    "CategorySpec",
    "GoldenCall",
    "SuiteSpec",
    "SuiteTotals",
    "SuiteValidator",
    "Violation",
    "input_hashes",
    "load_cases",
    "suite_path",
    "validate_suite",
]

_MODULE_OF = {
    "input_hashes": "hashes",
    "load_cases": "loader",
    "suite_path": "loader",
    "Case": "model",
    "GoldenCall": "model",
    "CategorySpec": "spec",
    "SuiteSpec": "spec",
    "SuiteTotals": "spec",
    "SuiteValidator": "validator",
    "Violation": "validator",
    "validate_suite": "validator",
}


def __getattr__(name: str) -> object:
    if name in _MODULE_OF:
        return getattr(import_module(f"traceladder.suite.cases.{_MODULE_OF[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
