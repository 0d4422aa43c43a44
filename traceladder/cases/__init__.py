"""Cases: the CaseV1 model, loader, validator, input hashes and the shipped 72-case suite."""

from traceladder.cases.hashes import input_hashes
from traceladder.cases.loader import load_cases, shipped_suite_path
from traceladder.cases.model import Case, GoldenCall
from traceladder.cases.validator import SuiteValidator, Violation, validate_suite

__all__ = [
    "Case",
    "GoldenCall",
    "SuiteValidator",
    "Violation",
    "input_hashes",
    "load_cases",
    "shipped_suite_path",
    "validate_suite",
]
