"""A command module parses, calls one workflow, prints: it imports no other command (what two
commands share is an option module, `cli/run_options.py`) and spells no SQL (all of it lives in
`store/`)."""

from __future__ import annotations

import ast
import importlib
import inspect
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


# A workflow is one function taking a typed request: nothing below `cli/` takes the parser's
# Namespace. Only a process's own entry point (a `__main__` module of its own argv) parses flags.
PACKAGE = Path(traceladder.__file__).parent


def _argparse_users() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.parent == CLI:
            continue
        text = path.read_text()
        tree = ast.parse(text)
        entry = 'if __name__ == "__main__":' in text
        for node in ast.walk(tree):
            imported = (isinstance(node, ast.Import) and any(a.name == "argparse" for a in node.names)) or (
                isinstance(node, ast.ImportFrom) and node.module == "argparse"
            )
            if imported and not entry:
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} imports argparse")
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for arg in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
                    if arg.annotation is not None and "Namespace" in ast.unparse(arg.annotation):
                        found.append(
                            f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}({arg.arg}: Namespace)"
                        )
    return found


def test_no_workflow_takes_a_namespace():
    assert _argparse_users() == []


def _workflow_functions(tree: ast.Module) -> dict[str, str]:
    """The names a command module imports from `traceladder.workflows` that are functions (a
    request or result class is not a call of a workflow)."""
    names = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.module.startswith("traceladder.workflows")
        ):
            module = importlib.import_module(node.module)
            for alias in node.names:
                if inspect.isfunction(getattr(module, alias.name)):
                    names[alias.asname or alias.name] = (
                        f"{node.module.removeprefix('traceladder.')}.{alias.name}"
                    )
    return names


def _handlers(tree: ast.Module) -> list[str]:
    return [
        kw.value.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "set_defaults"
        for kw in node.keywords
        if kw.arg == "handler" and isinstance(kw.value, ast.Name)
    ]


def _cli_helpers(tree: ast.Module) -> dict[str, Path]:
    """Functions the module imports from another `cli/` module (an option module's helper, which
    could call a workflow on the command's behalf): name → that module's file."""
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("traceladder.cli."):
            path = CLI / f"{node.module.removeprefix('traceladder.cli.')}.py"
            if path.exists():
                found |= {alias.asname or alias.name: path for alias in node.names}
    return found


def _called(tree: ast.Module, name: str, workflows: dict[str, str], seen: set[str]) -> set[str]:
    """The workflow functions the module's function `name` calls, itself or through helpers — the
    module's own, or a function it imports from another `cli/` module."""
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    if name in seen or name not in functions:
        return set()
    seen.add(name)
    helpers = _cli_helpers(tree)
    found: set[str] = set()
    for node in ast.walk(functions[name]):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            callee = node.func.id
            if callee in workflows:
                found.add(workflows[callee])
            elif callee in functions:
                found |= _called(tree, callee, workflows, seen)
            elif callee in helpers and f"{helpers[callee]}:{callee}" not in seen:
                seen.add(f"{helpers[callee]}:{callee}")
                other = ast.parse(helpers[callee].read_text())
                found |= _called(other, callee, _workflow_functions(other), set())
    return found


def workflow_calls() -> dict[str, set[str]]:
    """Per command handler (`module.handler`), the workflow functions it calls."""
    calls = {}
    for path in COMMANDS:
        tree = ast.parse(path.read_text())
        workflows = _workflow_functions(tree)
        for handler in _handlers(tree):
            calls[f"{path.stem}.{handler}"] = _called(tree, handler, workflows, set())
    return calls


def test_a_command_calls_one_workflow():
    calls = workflow_calls()
    assert calls["gate_cmd.handle"] == {"workflows.gate_run.run_gate"}  # the check sees calls
    assert calls["run_cmd.handle"] == {"workflows.run.run"}  # the built-in loop's and an agent's
    assert calls["baseline_cmd.handle_init"] == {"workflows.baseline_init.init_baseline"}
    assert calls["report_cmd.handle"] == {"workflows.report.make_report"}  # a run's, live, leaderboard
    # the code rungs on labelled faults, or (--judge) a judge on the labelled set
    assert calls["selfcheck_cmd.handle"] == {"workflows.selfcheck.run_selfcheck"}
    more = {handler: called for handler, called in calls.items() if len(called) > 1}
    assert more == {}


def test_watch_is_asked_by_its_request_alone():
    """`watch` takes its typed request (`WatchOptions`, `once` and `stopping` included), the store
    and where to say progress: no loose flag beside the request."""
    from traceladder.workflows.watch import WatchOptions, watch

    assert list(inspect.signature(watch).parameters) == ["db", "options", "say"]
    fields = {f for f in WatchOptions.__dataclass_fields__}
    assert {"once", "stopping"} <= fields


def test_watch_once_stops_when_nothing_is_due(tmp_path):
    """The request's `once` is obeyed: a watch of a store that does not exist yet says it waits,
    and returns at once instead of polling; `stopping` stops it before the first poll."""
    from traceladder.workflows.watch import WatchOptions, watch

    said: list[str] = []
    progress = watch(tmp_path / "none.duckdb", WatchOptions(once=True), said.append)
    assert progress.batches == 0 and said and said[0].startswith("waiting:")
    stopped: list[str] = []
    watch(tmp_path / "none.duckdb", WatchOptions(stopping=lambda: True), stopped.append)
    assert stopped == []
