"""Tests may run commands in-process (tests/inprocess_cli.py) where the command line is not their
subject; the command line itself keeps real-process tests: every command is still started through
`cli()` (a forked `python -m traceladder`) or a started interpreter somewhere in the suite, and every
exit code of the contract a real process returns is asserted on one (docs/testing.md)."""

from __future__ import annotations

import re

from conftest import ROOT

from traceladder.cli.commands import COMMANDS

TESTS = ROOT / "tests"
# `cli("run", …)`, `cli(*["run", …])` is not used; a started interpreter: `"-m", "traceladder", "run"`
# or `[…traceladder…, "run"`. Calls through `cli_in_process` do not count.
REAL_CALL = re.compile(r'(?:(?<![\w.])cli\(\s*|"-m", "traceladder", |traceladder"\)?\]?, )"([a-z-]+)"')
# Exit codes a real process returns, as docs/cli.md lists them (3, an internal error, needs a bug:
# it is tested in-process, tests/reporting/test_report_contract.py).
REAL_EXITS = {0, 1, 2, 130, 143}


def _sources() -> dict[str, str]:
    return {str(p.relative_to(TESTS)): p.read_text(encoding="utf-8") for p in TESTS.rglob("*.py")}


def test_every_command_keeps_a_real_cli_test():
    started = {m.group(1) for text in _sources().values() for m in REAL_CALL.finditer(text)}
    assert set(COMMANDS) - started == set(), "commands no test starts as a real process"


def test_every_exit_code_keeps_a_real_cli_test():
    asserted = set()
    for text in _sources().values():
        if not REAL_CALL.search(text):
            continue
        asserted |= {int(c) for c in re.findall(r"returncode == (\d+)", text)}
        asserted |= {int(c) for c in re.findall(r"\(signal\.SIG\w+, (\d+)\)", text)}
    assert REAL_EXITS - asserted == set(), "exit codes no real-process test asserts"
