"""A command module parses, calls one workflow, prints: it imports no other command (what two
commands share is an option module, `cli/run_options.py`) and spells no SQL (all of it lives in
`storage/`)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import traceladder

CLI = Path(traceladder.__file__).parent / "cli"
COMMANDS = sorted(CLI.glob("*_cmd.py"))
# a statement the store runs: its keyword first (a help text quoting an example starts otherwise)
SQL = re.compile(
    r"^\s*(SELECT\b.*\bFROM\b|INSERT\s+(OR\s+\w+\s+)?INTO\b|UPDATE\s+\w+\s+SET\b|DELETE\s+FROM\b"
    r"|WITH\s+\w+\s+AS\s*\(|CREATE\s+(OR\s+REPLACE\s+)?(TABLE|VIEW|INDEX)\b|COPY\s*\()",
    re.DOTALL,
)
DB_CALLS = {"execute", "executemany", "fetchall", "fetchone", "fetchdf", "sql"}


def _imports(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names |= {f"{node.module}.{a.name}" for a in node.names}
    return names


def test_there_are_commands_to_check():
    assert len(COMMANDS) > 20 and CLI / "run_cmd.py" in COMMANDS and CLI / "baseline_cmd.py" in COMMANDS


def test_no_command_imports_another():
    found = []
    for path in COMMANDS:
        own = f"traceladder.cli.{path.stem}"
        for name in _imports(ast.parse(path.read_text())):
            if re.fullmatch(r"traceladder\.cli\.[a-z_]+_cmd(\..*)?", name) and not name.startswith(own):
                found.append(f"{path.name} imports {name}")
    assert found == []


def test_no_command_spells_or_runs_sql():
    found = []
    for path in COMMANDS:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL.match(node.value):
                found.append(f"{path.name}:{node.lineno} {node.value[:40]!r}")
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in DB_CALLS
            ):
                found.append(f"{path.name}:{node.lineno} .{node.func.attr}(…)")
    assert found == []
