"""The import graph is what the modules' top lines say. An `import` inside a function hides an edge
of it, so one is allowed only where it buys start-up time for a command that does not need the
module (measured by `bench/cli_startup.py`, pinned by `tests/cli/test_cli_startup.py`):

- at the CLI edge, `traceladder/cli/` (a command loads its workflow when it runs, not when the
  parser is built);
- in the lazy `__getattr__` of a package face (`evaluate/__init__.py`, `evaluate/rungs/__init__.py`,
  `suite/cases/__init__.py`, …), which loads a name's module on first use;
- in the modules listed below, each with how many such imports it holds and why (decision 620).

Adding one anywhere else, or one more in a listed module, fails here: import it at the top, or put
the heavy dependency in a module of its own that only the edge imports lazily. Removing one fails
too, so the list stays the truth (lower its count, or drop the entry).
"""

from __future__ import annotations

import ast
from pathlib import Path

import traceladder

PACKAGE = Path(traceladder.__file__).parent

# module (under traceladder/) → (function-level imports, why they cannot be at the top)
ALLOWED: dict[str, tuple[int, str]] = {
    # heavy third-party libraries, loaded by the one function that uses them
    "store/db.py": (
        7,
        "pyarrow for a trace-id table; segments/fold/overlay (Arrow, the stage) only "
        "when a receiver left segments; the stale check's constants, not the conventions",
    ),
    "store/readers.py": (4, "pyarrow: `report` and `gate` read the store without Arrow"),
    "store/segments.py": (4, "pyarrow: every command's open_store asks has_pending"),
    "store/writes.py": (1, "the default extraction stage: store/ never reads a span by convention"),
    "schemas/__init__.py": (3, "jsonschema / jsonschema_rs on first validation, not at start-up"),
    "instrumentation/tracing.py": (1, "the OTLP exporter (protobuf, requests) only when OTLP is configured"),
    "project_config.py": (1, "tomllib only when a traceladder.toml exists: every store open asks"),
    "evaluate/judge/asking.py": (1, "the OpenAI client library only when a judge is asked"),
    "evaluate/judge/choice.py": (1, "the simulated judge (the OpenAI library) only when it is chosen"),
    "evaluate/judge/phase.py": (1, "the simulated judge (the OpenAI library), for selfcheck and tests"),
    "suite/cases/loader.py": (1, "the suite validator (jsonschema) only when a suite is loaded"),
    "suite/cases/validator.py": (1, "the schema rung (jsonschema) only when a case has a tool schema"),
    "suite/domain/base.py": (1, "naming a domain must not import the schema validator"),
    "suite/domain/registry.py": (1, "the declarative builder (jsonschema, tomllib) only for a directory"),
    "suite/domain/retail/domain.py": (1, "the fixture checks only when the domain validates itself"),
    "suite/domain/retail/sandbox.py": (1, "the schema rung only when the sandbox executes a call"),
    "receive/span_sources/__init__.py": (
        2,
        "a span source's reader (Arrow, the ClickHouse client) per scheme",
    ),
    "receive/serve/server.py": (2, "the fold (Arrow, the stage) only in the receiver's fold thread"),
    "receive/serve/worker.py": (3, "a worker watches its parent before paying for pyarrow"),
    "produce/subject/mcp_tools.py": (1, "the optional MCP extra: missing, the subject gets no MCP URL"),
    # a workflow one command calls: the edge's other half
    "workflows/evaluate.py": (4, "the shard executor and span sources only for evaluate --source/--dask"),
    "workflows/gate_run.py": (5, "the report builder, baseline and PR comment only for --junit/--baseline"),
    "workflows/report_files.py": (
        8,
        "rich, renderers for the format asked; conventions with conversations; the domain "
        "registry only for a run that names a domain",
    ),
    "workflows/report_formats.py": (1, "the HTML page renderer only for --format html"),
    "workflows/report.py": (
        5,
        "the page renderer, the trend views and the leaderboard: html, --live, --runs",
    ),
}


def _lazy_imports(path: Path) -> list[int]:
    """Line numbers of the import statements inside function bodies of `path`, except those in a
    package's module-level `__getattr__` (the lazy face)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lines: list[int] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                face = path.name == "__init__.py" and node is tree and child.name == "__getattr__"
                if not face:
                    visit(child, True)
            elif isinstance(child, ast.Import | ast.ImportFrom) and in_function:
                lines.append(child.lineno)
            else:
                visit(child, in_function)

    visit(tree, False)
    return lines


def _outside_the_cli() -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE).as_posix()
        if name.startswith("cli/"):
            continue
        if lines := _lazy_imports(path):
            found[name] = lines
    return found


def test_function_level_imports_only_at_the_edge_and_in_the_listed_modules():
    found = _outside_the_cli()
    unexpected = {
        f"{name}:{lines}" for name, lines in found.items() if len(lines) != ALLOWED.get(name, (0, ""))[0]
    }
    stale = {name for name in ALLOWED if name not in found}
    assert not unexpected and not stale, (
        f"function-level imports not as listed (move them to the top, or list them with a reason): "
        f"{sorted(unexpected)}; listed but gone: {sorted(stale)}"
    )


def test_every_listed_module_exists_and_says_why():
    for name, (count, why) in ALLOWED.items():
        assert (PACKAGE / name).is_file(), name
        assert count > 0 and len(why) > 20, name


def test_the_counter_sees_an_import_in_a_function_and_not_in_a_package_face(tmp_path):
    """The walk counts what it should: a nested function's import, a method's, none at the top or
    in an `__init__.py`'s `__getattr__` (but one in an ordinary module's `__getattr__`)."""
    source = (
        "import os\n"
        "def f():\n    import json\n    def g():\n        from os import path\n"
        "class C:\n    def m(self):\n        import re\n"
        "def __getattr__(name):\n    from importlib import import_module\n"
    )
    (tmp_path / "__init__.py").write_text(source)
    (tmp_path / "mod.py").write_text(source)
    assert _lazy_imports(tmp_path / "__init__.py") == [3, 5, 8]
    assert _lazy_imports(tmp_path / "mod.py") == [3, 5, 8, 10]
