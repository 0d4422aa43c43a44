"""Reading a CaseV1 JSONL suite: a domain's shipped one, or any file a user names."""

from __future__ import annotations

from pathlib import Path

from traceladder.errors import UserError
from traceladder.suite.cases.model import Case
from traceladder.suite.domain.base import Domain
from traceladder.suite.domain.registry import load_domain


def suite_path(domain: Domain, path: Path | None = None) -> Path:
    """The file to load: `path` when given, else the domain's shipped suite."""
    if path is not None:
        return path
    if domain.suite_path is None:
        raise UserError(f"the {domain.name} domain ships no case suite; pass --cases FILE")
    return domain.suite_path


def load_cases(domain: Domain | None = None, path: Path | None = None) -> tuple[Case, ...]:
    """Load and validate a suite (default: the default domain's); raises `UserError` listing the
    violations when invalid."""
    from traceladder.suite.cases.validator import require_valid_suite

    if domain is None:
        domain = load_domain()
    return require_valid_suite(suite_path(domain, path), domain)
