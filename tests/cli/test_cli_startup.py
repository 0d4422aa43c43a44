"""Every test (and every user) pays the CLI's start-up on each command: the OpenAI client library
(~0.4 s to import) loads only for the commands that run an agent."""

from __future__ import annotations

import subprocess
import sys


def test_the_cli_starts_without_the_openai_library():
    code = (
        "import sys; import traceladder.cli.main, traceladder.agent.config; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'openai', 'httpx2'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_agent_package_still_exports_the_runner():
    import traceladder.agent
    from traceladder.agent import runner

    assert traceladder.agent.run_suite is runner.run_suite
    assert traceladder.agent.RunOptions is runner.RunOptions
    assert traceladder.agent.RunSummary is runner.RunSummary


# What a command imports at start-up, run for real in a fresh interpreter: the heavy libraries
# (the model client, Arrow, the OTel SDK, HTTP clients, jsonschema) load only for the commands
# that use them, so `--version` and `sql "SELECT 1"` cost little more than `import duckdb`.
HEAVY = ("openai", "pyarrow", "opentelemetry.sdk", "httpx", "httpx2", "jsonschema", "numpy")
LOADED_AFTER_MAIN = """
import sys
from traceladder.cli.main import main
try:
    code = main(sys.argv[1:])
except SystemExit as exc:  # --version exits from the parser
    code = exc.code
heavy = sorted(m for m in {heavy!r} if m in sys.modules)
commands = sorted(m for m in sys.modules if m.startswith("traceladder.cli.") and m.endswith("_cmd"))
print(repr((code, heavy, commands)), file=sys.stderr)
"""


def loaded_by(*argv: str) -> tuple[object, list[str], list[str]]:
    """(exit code, heavy modules imported, command modules imported) of `traceladder ARGV`."""
    import ast

    out = subprocess.run(
        [sys.executable, "-c", LOADED_AFTER_MAIN.format(heavy=HEAVY), *argv],
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    return ast.literal_eval(out.stderr.strip().splitlines()[-1])


def test_version_imports_no_command_and_no_heavy_library():
    assert loaded_by("--version") == (0, [], [])


def test_sql_select_1_imports_only_its_command_and_no_heavy_library(tmp_path):
    from traceladder.storage import Store

    db = tmp_path / "s.duckdb"
    with Store(db):
        pass
    assert loaded_by("sql", "--db", str(db), "SELECT 1") == (0, [], ["traceladder.cli.sql_cmd"])


def test_the_registry_names_the_one_subcommand_each_module_registers():
    """The lazy parser of one command is the full parser's, for every command in the registry."""
    from traceladder.cli import commands
    from traceladder.cli.docs import _subparsers
    from traceladder.cli.main import build_parser

    full = dict(_subparsers(build_parser()))
    assert list(full) == list(commands.COMMANDS)
    for name in commands.COMMANDS:
        alone = dict(_subparsers(build_parser([name, "--help"])))
        assert list(alone) == [name]
        assert alone[name].format_help() == full[name].format_help()
