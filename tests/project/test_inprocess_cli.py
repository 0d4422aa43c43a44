"""`cli_in_process()` (tests/inprocess_cli.py) must answer as the forked `cli()` does — exit code,
stdout, stderr — and a command run in-process must leave the process as it found it."""

from __future__ import annotations

import os
import signal

import pytest
from conftest import ROOT, cli, cli_in_process, rows


@pytest.mark.parametrize(
    "args",
    [
        ("--version",),  # argparse's SystemExit(0)
        ("sql", "--help"),
        ("nosuchcommand",),  # usage error: exit 2, one line
        ("cases", "coverage"),  # a command's handler, exit 0
        ("report", "--db", "/nonexistent/store.duckdb"),  # a handled error: exit 2, one line
    ],
)
def test_an_in_process_command_answers_as_a_forked_one(args):
    forked, here = cli(*args), cli_in_process(*args)
    assert (here.returncode, here.stdout, here.stderr) == (forked.returncode, forked.stdout, forked.stderr)


def test_the_working_directory_is_the_calls_and_is_restored(tmp_path):
    fixture = ROOT / "tests/fixtures/conversations/strands/confirmed-plain/collector-traces.jsonl"
    here = os.getcwd()
    assert cli_in_process("ingest", "--db", "relative.duckdb", str(fixture), cwd=tmp_path).returncode == 0
    assert (tmp_path / "relative.duckdb").exists() and os.getcwd() == here


def test_a_store_written_in_process_is_the_one_a_fork_writes(tmp_path):
    fixture = str(ROOT / "tests/fixtures/conversations/strands/confirmed-plain/collector-traces.jsonl")
    for name, run in (("forked", cli), ("here", cli_in_process)):
        assert run("ingest", "--db", str(tmp_path / f"{name}.duckdb"), fixture).returncode == 0
    query = "SELECT trace_id, tool_name, call_id, arguments_raw FROM tool_calls ORDER BY ALL"
    assert rows(tmp_path / "here.duckdb", query) == rows(tmp_path / "forked.duckdb", query) != []


def test_main_leaves_sigterm_as_it_found_it():
    """`main` installs its SIGTERM handler for the command only (traceladder/cli/main.py); left
    installed, the in-process runner's guard names it (LeakError) — which is how it was found."""
    before = signal.getsignal(signal.SIGTERM)
    assert cli_in_process("cases", "coverage").returncode == 0
    assert signal.getsignal(signal.SIGTERM) is before
