"""The stages import what they may (issue 30): decoding (`decode/`) reads no convention, storage
imports neither a convention nor the extraction stage's code, and a convention is Python only —
no convention module holds SQL for the store."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "traceladder"


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def _importing(package: str, prefix: str) -> list[str]:
    return sorted(
        str(p.relative_to(PACKAGE))
        for p in (PACKAGE / package).rglob("*.py")
        if any(m == prefix or m.startswith(prefix + ".") for m in _imports(p))
    )


def test_decoding_reads_no_convention() -> None:
    assert _importing("decode", "traceladder.extract.conventions") == []


def test_storage_imports_no_convention() -> None:
    # What was said is read by convention at read time, from rows storage returns (decision 440).
    assert _importing("store", "traceladder.extract.conventions") == []
    # the stage is reached through `store.derived.Extraction`; only the default is wired lazily
    assert _importing("store", "traceladder.extract") == ["store/db.py", "store/writes.py"]


def test_no_convention_holds_sql() -> None:
    for path in (PACKAGE / "extract" / "conventions").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for word in ("json_extract", "SELECT ", "CASE WHEN", "_sql"):
            assert word not in text, (path.name, word)
