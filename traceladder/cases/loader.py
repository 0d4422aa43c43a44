"""Reading a CaseV1 JSONL suite: the shipped one, or any file a user names."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from traceladder.cases.model import Case

SHIPPED_SUITE = "retail_fc.jsonl"


def shipped_suite_path() -> Path:
    return Path(str(resources.files("traceladder.cases") / SHIPPED_SUITE))


def load_cases(path: Path | None = None) -> tuple[Case, ...]:
    """Load and validate a suite; raises `UserError` listing the violations when invalid."""
    from traceladder.cases.validator import require_valid_suite

    return require_valid_suite(path or shipped_suite_path())
