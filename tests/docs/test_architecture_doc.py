"""docs/architecture.md matches the code: it names every package, every path it names exists, and
it stays short enough to read in five minutes."""

from __future__ import annotations

import re
from pathlib import Path

import traceladder

PACKAGE = Path(traceladder.__file__).parent
DOC = PACKAGE.parent / "docs" / "architecture.md"


def _packages() -> list[str]:
    """Every package directory under traceladder/, as the doc spells it (`store/migrations/`)."""
    return sorted(
        init.parent.relative_to(PACKAGE).as_posix() + "/"
        for init in PACKAGE.rglob("__init__.py")
        if init.parent != PACKAGE and "__pycache__" not in init.parts
    )


def _named_paths(text: str) -> set[str]:
    """Every `code span` of the doc that looks like a path inside the package."""
    spans = re.findall(r"`([^`\s]+)`", text)
    return {s for s in spans if s.endswith((".py", "/")) and "*" not in s and not s.startswith(("http", "."))}


def _resolve(path: str, packages: list[str]) -> bool:
    """A path names a file or package, from the package root or from a package the doc lists."""
    candidates = [PACKAGE.parent / path, PACKAGE / path] + [PACKAGE / pkg / path for pkg in packages]
    return any(c.is_file() or (c / "__init__.py").is_file() for c in candidates)


def test_every_package_is_on_the_map():
    text = DOC.read_text()
    missing = [pkg for pkg in _packages() if f"`{pkg}`" not in text]
    assert missing == []


def test_every_path_the_map_names_exists():
    text = DOC.read_text()
    packages = _packages()
    named = _named_paths(text)
    assert len(named) > 40  # the map names modules, not only packages
    assert sorted(p for p in named if not _resolve(p, packages)) == []


def test_the_root_modules_are_on_the_map_too():
    text = DOC.read_text()
    roots = [p.name for p in PACKAGE.glob("*.py") if p.name not in {"__init__.py", "__main__.py"}]
    assert [name for name in roots if f"`{name}`" not in text] == []


def test_short_enough_to_read_in_five_minutes():
    lines = DOC.read_text().splitlines()
    assert len(lines) <= 120 and len(" ".join(lines).split()) <= 1500


def test_the_readme_links_the_map():
    assert "(docs/architecture.md)" in (PACKAGE.parent / "README.md").read_text()


def test_the_path_of_a_case_names_what_the_code_defines():
    """Each `module.py: name` of the case's path is a top-level function or class of that module."""
    import ast

    path = DOC.read_text().split("## A case's path", 1)[1].split("\n## ", 1)[0]
    named = re.findall(r"`([a-z_]+(?:/[a-z_]+)+\.py): ([A-Za-z_]+)`", path)
    assert len(named) >= 6
    defined = {
        module: {n.name for n in ast.parse((PACKAGE / module).read_text()).body if hasattr(n, "name")}
        for module, _ in named
    }
    assert [f"{m}: {n}" for m, n in named if n not in defined[m]] == []
