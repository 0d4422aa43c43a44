"""Cases: the CaseV1 model, the suite spec, loader, validator and input hashes. A suite belongs to
its domain (the retail suite ships with the retail domain)."""

from traceladder.cases.hashes import input_hashes
from traceladder.cases.loader import load_cases, suite_path
from traceladder.cases.model import Case, GoldenCall
from traceladder.cases.spec import CategorySpec, SuiteSpec, SuiteTotals
from traceladder.cases.validator import SuiteValidator, Violation, validate_suite

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
