"""docs/workflows.md matches the code: every module it names is a file, every `module.py: function`
is defined there, and every workflow that takes a typed request is in its table."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import traceladder

PACKAGE = Path(traceladder.__file__).parent
DOC = PACKAGE.parent / "docs" / "workflows.md"


def _defined(path: Path) -> set[str]:
    return {n.name for n in ast.parse(path.read_text()).body if isinstance(n, ast.FunctionDef | ast.ClassDef)}


def test_every_named_module_and_function_exists():
    text = DOC.read_text(encoding="utf-8")
    paths = set(re.findall(r"\b([a-z_]+/[a-z_/]*[a-z_]+\.py)\b", text))
    missing = [p for p in paths if not (PACKAGE / p).is_file() and not (PACKAGE.parent / p).is_file()]
    assert paths and missing == []
    named = re.findall(r"`([a-z_]+(?:/[a-z_]+)+\.py): ([a-z_]+)`", text)
    assert named and [f"{m}: {f}" for m, f in named if f not in _defined(PACKAGE / m)] == []


def test_every_workflow_with_a_typed_request_is_in_the_table():
    text = DOC.read_text(encoding="utf-8")
    requests = {
        f"workflows/{path.name}": name
        for path in sorted((PACKAGE / "workflows").glob("*.py"))
        for name in _defined(path)
        if name.endswith("Request")
    }
    assert requests and [m for m, r in requests.items() if f"`{m}" not in text or f"`{r}`" not in text] == []
