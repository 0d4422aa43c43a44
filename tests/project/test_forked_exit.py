"""A forked `cli()` child ends without clearing the modules the fork shared (tests/forked_exit.py).
What it leaves behind must be what a real interpreter's exit leaves: the same script ended both
ways — a non-daemon thread still writing, an `atexit` handler, stdout not yet flushed, a file
written and left open, a DuckDB store written and left open, an object whose `__del__` raises, a
`SystemExit` code — gives the same exit status, output, files and store."""

from __future__ import annotations

import re
import subprocess
import sys

import duckdb

from tests.conftest import ROOT

SCRIPT = r"""
import atexit, gc, importlib.util, sys, threading, time
import duckdb
spec = importlib.util.spec_from_file_location("forked_exit", sys.argv[3])
forked_exit = importlib.util.module_from_spec(spec)
spec.loader.exec_module(forked_exit)
if sys.argv[2] == "fast":
    gc.freeze()  # as the zygote does before it forks: what exists now is shared, not the command's
here = sys.argv[1]

def slow():
    time.sleep(0.3)
    with open(f"{here}/thread.txt", "w") as f:
        f.write("the thread finished")

threading.Thread(target=slow).start()
atexit.register(lambda: print("atexit ran"))
left_open = open(f"{here}/left-open.txt", "w")
left_open.write("x" * 100_000)
left_open.write("end")  # still in its buffer
store = duckdb.connect(f"{here}/left-open.duckdb")
store.execute("CREATE TABLE t AS SELECT range AS i FROM range(1000)")

class Failing:
    def __del__(self):
        raise ValueError("a finaliser failed")

failing = Failing()
print("not yet flushed", end="")
if sys.argv[2] == "fast":
    forked_exit.end(3)
raise SystemExit(3)
"""


def _ended(tmp_path, how):
    here = tmp_path / how
    here.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(here), how, str(ROOT / "tests" / "forked_exit.py")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    stderr = re.sub(r"0x[0-9a-f]+", "0x…", done.stderr)
    stderr = re.sub(r'File "[^"]*", line \d+', "File …", stderr)  # where each way is called from
    wal = (here / "left-open.duckdb.wal").exists()
    rows = (
        duckdb.connect(str(here / "left-open.duckdb"), read_only=True)
        .sql("SELECT count(*) FROM t")
        .fetchall()
    )
    files = {name: (here / name).read_text() for name in ("thread.txt", "left-open.txt")}
    return done.returncode, done.stdout, stderr, wal, rows, files


def test_a_forked_child_ends_leaving_what_a_real_exit_leaves(tmp_path):
    real, fast = _ended(tmp_path, "real"), _ended(tmp_path, "fast")
    assert fast == real
    status, stdout, stderr, wal, rows, files = fast
    assert status == 3 and stdout == "not yet flushedatexit ran\n"
    assert "Exception ignored in: <function Failing.__del__" in stderr and "a finaliser failed" in stderr
    assert not wal and rows == [(1000,)]  # the connection closed, its WAL checkpointed
    assert files == {"thread.txt": "the thread finished", "left-open.txt": "x" * 100_000 + "end"}
