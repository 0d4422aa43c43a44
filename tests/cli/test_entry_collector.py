"""The process's entry point (`traceladder`, `python -m traceladder`: `cli.entry.entry`) keeps the
cyclic garbage collector off start-up's objects — frozen once the command's module is imported and
its flags parsed, the collector on again for the command (decision 761) — and `cli.main.main`, which
the tests and embedding programs call in a process that goes on, leaves the collector as it found it.

Each case runs in a fresh interpreter and reports the collector's state after the call returned."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from traceladder.store import Store

# The call, then (exit code, collector enabled, objects frozen, a cycle made after it collected).
AFTER = """
import gc, sys, weakref
call, argv = sys.argv[1], sys.argv[2:]
sys.argv = ["traceladder", *argv]
try:
    if call == "entry":
        from traceladder.cli.entry import entry
        code = entry()
    else:
        from traceladder.cli.main import main
        code = main(argv)
except SystemExit as exc:  # --version and a usage error exit from the parser
    code = exc.code

class Node:
    pass

node = Node()
node.self = node  # a cycle made by the command's own code
gone = weakref.ref(node)
del node
gc.collect()
print(repr((int(code or 0), gc.isenabled(), gc.get_freeze_count(), gone() is None)), file=sys.stderr)
"""


def _after(call: str, *argv: str) -> tuple[object, bool, int, bool]:
    done = subprocess.run(
        [sys.executable, "-c", AFTER, call, *argv], capture_output=True, text=True, timeout=120
    )
    return ast.literal_eval(done.stderr.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("entry") / "s.duckdb"
    with Store(db):
        pass
    return db


@pytest.mark.parametrize("argv", [("--version",), ("report", "--no-such-flag"), ("sql", "SELECT 1")])
def test_the_entry_point_freezes_start_up_and_collects_again(store, argv):
    argv = (*argv, "--db", str(store)) if argv[0] == "sql" else argv
    code, enabled, frozen, collected = _after("entry", *argv)
    assert code == (2 if "--no-such-flag" in argv else 0)
    assert enabled and collected  # the command's own cycles are collected as before
    assert frozen > 10_000  # the imported modules' objects: DuckDB's Python layer, argparse, ours


def test_main_leaves_the_collector_as_it_found_it(store):
    code, enabled, frozen, collected = _after("main", "sql", "--db", str(store), "SELECT 1")
    assert (code, enabled, frozen, collected) == (0, True, 0, True)
