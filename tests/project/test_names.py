"""Names that mean one thing (issue 34, point 4; docs/architecture.md's list is the contract):
every module, function and class named for one of the listed words lives where the list says that
word belongs. A second meaning — "fold" for a verdict beside the receiver's segment fold, "settle"
for a SQL pass beside the ladder — fails here, whatever file it is added in."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "traceladder"
ARCHITECTURE = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"

# word → the modules (paths under traceladder/, a trailing "/" for a package) where it may name things
WHERE = {
    # the receiver's segments folded into the store
    "fold": ("store/fold.py", "store/segments.py", "store/overlay.py", "receive/serve/"),
    # the ladder deciding a trace's verdict, and the workers that do it in bulk
    "settle": ("evaluate/rungs/ladder.py", "evaluate/"),
}


def _named(word: str) -> list[tuple[str, str]]:
    """(module, name) of every module, function and class named for `word` (snake or Camel case)."""
    pattern = re.compile(rf"(^|_){word}(ed|s|ing)?($|_)", re.IGNORECASE)
    camel = re.compile(rf"{word.capitalize()}[A-Z]|{word.capitalize()}$|^{word.capitalize()}")
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = str(path.relative_to(PACKAGE))
        if pattern.search(path.stem):
            found.append((module, path.stem))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            if pattern.search(node.name) or camel.search(node.name):
                found.append((module, node.name))
    return found


def _allowed(module: str, word: str) -> bool:
    return any(module == w or (w.endswith("/") and module.startswith(w)) for w in WHERE[word])


def test_each_listed_word_names_things_only_where_the_list_says() -> None:
    for word in WHERE:
        elsewhere = [(m, n) for m, n in _named(word) if not _allowed(m, word)]
        assert elsewhere == [], f"{word!r} means one thing (docs/architecture.md): {elsewhere}"


def test_the_list_in_the_architecture_doc_names_each_word() -> None:
    names = ARCHITECTURE.read_text(encoding="utf-8").split("## Names that mean one thing", 1)[1]
    names = names.split("\n## ", 1)[0]
    for word in WHERE:
        assert f"**{word}**" in names, word
