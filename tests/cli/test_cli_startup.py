"""Every test (and every user) pays the CLI's start-up on each command: the OpenAI client library
(~0.4 s to import) loads only for the commands that run an agent."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import cli


def test_the_cli_starts_without_the_openai_library():
    code = (
        "import sys; import traceladder.cli.main, traceladder.produce.agent.config; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'openai', 'httpx2'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_agent_package_still_exports_the_runner():
    import traceladder.produce.agent
    from traceladder.produce.agent import runner

    assert traceladder.produce.agent.run_suite is runner.run_suite
    assert traceladder.produce.agent.RunOptions is runner.RunOptions
    assert traceladder.produce.agent.RunSummary is runner.RunSummary


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
heavy = sorted(m for m in {watch!r} if m in sys.modules)
commands = sorted(m for m in sys.modules if m.startswith("traceladder.cli.") and m.endswith("_cmd"))
print(repr((code, heavy, commands)), file=sys.stderr)
"""


def loaded_by(*argv: str, watch: tuple[str, ...] = HEAVY) -> tuple[object, list[str], list[str]]:
    """(exit code, modules of `watch` imported, command modules imported) of `traceladder ARGV`."""
    import ast

    out = subprocess.run(
        [sys.executable, "-c", LOADED_AFTER_MAIN.format(watch=watch), *argv],
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    return ast.literal_eval(out.stderr.strip().splitlines()[-1])


def test_version_imports_no_command_and_no_heavy_library():
    assert loaded_by("--version") == (0, [], [])


def test_sql_select_1_imports_only_its_command_and_no_heavy_library(tmp_path):
    from traceladder.store import Store

    db = tmp_path / "s.duckdb"
    with Store(db):
        pass
    watch = HEAVY + OURS_HEAVY + ("traceladder.suite.domain", "traceladder.evaluate.rungs")
    assert loaded_by("sql", "--db", str(db), "SELECT 1", watch=watch) == (0, [], ["traceladder.cli.sql_cmd"])


# Our own modules that are heavy for the same reason: the ladder (its schema rung loads
# jsonschema-rs), the case loader and validator, the declarative domain builder (jsonschema,
# tomllib). Reading a stored run needs none of them.
OURS_HEAVY = (
    "traceladder.evaluate.rungs.analysis",
    "traceladder.evaluate.rungs.schema",
    "traceladder.suite.cases.loader",
    "traceladder.suite.cases.validator",
    "traceladder.suite.domain.declarative",
)


@pytest.fixture(scope="module")
def one_run(tmp_path_factory):
    """A store holding one finished, evaluated run of one case on the simulator."""
    db = tmp_path_factory.mktemp("startup") / "store.duckdb"
    done = cli("run", "--db", str(db), "--model", "sim:faulty", "--case", "fc-d4-001")
    assert done.returncode == 0, done.stderr
    return db


def test_report_as_text_imports_neither_the_ladder_nor_jsonschema_nor_a_heavy_library(one_run):
    assert loaded_by("report", "--db", str(one_run), watch=HEAVY + OURS_HEAVY) == (
        0, [], ["traceladder.cli.report_cmd"]
    )  # fmt: skip


def test_report_as_text_of_a_run_without_conversations_imports_no_convention(one_run):
    """The conventions (what a turn's messages are) load for a report's conversations only
    (decision 600): ~30 ms of the text summary's start-up."""
    watch = ("traceladder.extract.conventions", "traceladder.exchange")
    assert loaded_by("report", "--db", str(one_run), watch=watch) == (0, [], ["traceladder.cli.report_cmd"])


def test_report_as_text_of_traces_that_name_no_domain_imports_no_domain(tmp_path):
    """Ingested traces name no domain, and their report has no domain's dimensions or tools to
    use: the domain registry (~6 ms of the text summary's start-up, decision 700) loads only for a
    run that names one. (`one_run` names retail: its report still loads it, as the test above
    shows by printing retail's dimension names in tests/reporting.)"""
    from bulk_store import bulk_store

    db = tmp_path / "bulk.duckdb"
    bulk_store(db, 40, distinct=20)
    done = cli("evaluate", "--db", str(db))
    assert done.returncode == 0, done.stderr
    assert loaded_by("report", "bulk", "--db", str(db), watch=("traceladder.suite.domain",)) == (
        0, [], ["traceladder.cli.report_cmd"]
    )  # fmt: skip


def test_report_as_json_still_validates_it_against_report_v1(one_run):
    """The laziness moves the validator to where a report is validated; it does not skip validation
    (a valid report is accepted by the compiled validator alone, decision 431)."""
    assert loaded_by("report", "--db", str(one_run), "--format", "json", watch=("jsonschema_rs",)) == (
        0, ["jsonschema_rs"], ["traceladder.cli.report_cmd"]
    )  # fmt: skip


def test_gate_on_a_pass_rate_imports_no_report_no_domain_no_rich_and_no_heavy_library(one_run):
    """`gate --min-pass-rate` reads verdicts and prints one line: the report's builder (the domain,
    the case model), its renderers (rich, ElementTree) and the baseline's reader load only for
    --junit and --baseline."""
    watch = HEAVY + OURS_HEAVY + (
        "rich", "xml.etree", "traceladder.suite.domain", "traceladder.workflows.report_files",
        "traceladder.workflows.baseline_files",
    )  # fmt: skip
    assert loaded_by("gate", "--db", str(one_run), "--min-pass-rate", "0", watch=watch) == (
        0, [], ["traceladder.cli.gate_cmd"]
    )  # fmt: skip


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
