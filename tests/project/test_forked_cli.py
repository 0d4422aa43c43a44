"""The test suite's `cli()` forks commands from a pre-imported interpreter (tests/forked_cli.py):
what it returns must be what `python -m traceladder` gives — output, exit code, environment,
working directory — and a command that overruns its timeout is killed, not waited for."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, cli, out_values
from forked_cli import _get

RECURSIVE = "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT count(*) FROM r"


def real(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "traceladder", *args],
        capture_output=True, text=True, cwd=cwd, env={**os.environ, **(env or {})}, timeout=120,
    )  # fmt: skip


def test_the_zygote_serves_this_process():
    assert _get() is not None, "every cli() call would start an interpreter"


@pytest.mark.parametrize(
    "args", [("--version",), ("sql", "--help"), ("nosuchcommand",), ("cases", "coverage")]
)
def test_a_forked_command_answers_as_a_started_interpreter(args):
    forked, started = cli(*args), real(*args)
    assert (forked.returncode, forked.stdout, forked.stderr) == (
        started.returncode,
        started.stdout,
        started.stderr,
    )


def test_environment_and_working_directory_are_the_callers(tmp_path):
    db = tmp_path / "named.duckdb"
    done = cli(
        "run", "--case", "fc-d1-001", "--model", "sim:oracle", "--no-report", env={"TRACELADDER_DB": str(db)}
    )
    assert done.returncode == 0, done.stderr
    assert Path(out_values(done)["db"]).resolve() == db.resolve()
    here = cli("run", "--case", "fc-d1-001", "--model", "sim:oracle", "--no-report", cwd=tmp_path)
    assert here.returncode == 0, here.stderr
    assert (tmp_path / "traceladder.duckdb").is_file()


def test_a_call_past_its_timeout_is_killed_and_the_next_one_runs(tmp_path):
    db = tmp_path / "s.duckdb"
    assert (
        cli("run", "--case", "fc-d1-001", "--model", "sim:oracle", "--no-report", "--db", str(db)).returncode
        == 0
    )
    with pytest.raises(subprocess.TimeoutExpired):
        cli("sql", RECURSIVE, "--timeout", "600", "--db", str(db), timeout=2)
    # the killed command held the store; the next one opens it
    after = cli("sql", "SELECT count(*) FROM runs", "--csv", "--db", str(db))
    assert after.returncode == 0 and after.stdout.splitlines()[1] == "1", after.stderr


def test_another_pythonpath_whose_start_prints_starts_a_real_interpreter_each_call(tmp_path):
    """What an interpreter's start prints, a real interpreter prints on every call; a fork of a zygote
    that printed it once would not: such settings are never forked."""
    module = tmp_path / "sitecustomize.py"
    module.write_text("import sys; sys.stderr.write('started with my path\\n')\n")
    for _ in range(5):  # three real calls, the one that would start a zygote, and one after it
        done = cli("--version", env={"PYTHONPATH": str(tmp_path)})
        assert done.returncode == 0 and done.stderr.count("started with my path") == 1, done.stderr


def test_another_pythonpath_gets_a_zygote_of_its_own_from_its_fourth_call(tmp_path):
    """sys.path is fixed when an interpreter starts: a call naming another PYTHONPATH is never forked
    from this process's zygote. Its first three calls start real interpreters; later ones fork from a
    zygote started with that path (so it ran the path's `sitecustomize`): five calls, four starts."""
    starts = tmp_path / "starts"
    (tmp_path / "sitecustomize.py").write_text(
        f"import os\nwith open({str(starts)!r}, 'a') as f: f.write(f'{{os.getpid()}}\\n')\n"
    )
    for _ in range(5):
        done = cli("--version", env={"PYTHONPATH": str(tmp_path)})
        assert done.returncode == 0 and not done.stderr, done.stderr
    assert len(starts.read_text().split()) == 4


# Libraries a command imports inside a function; a child that imports one itself pays it on every
# call (openai: ~520 modules, 1.5 CPU-s per forked `run`; decision 690).
HEAVY = {"openai", "pydantic", "pydantic_core", "httpx", "httpx2", "anyio", "pyarrow", "duckdb", "opentelemetry"}  # fmt: skip

_NEW_MODULES = """
import contextlib, io, json, sys
from forked_cli import PRELOAD
exec(PRELOAD)
from traceladder.cli.main import main
new = {}
for argv in json.loads(sys.argv[1]):
    before = set(sys.modules)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = main(argv)
    new[argv[0]] = [code, sorted(set(sys.modules) - before)]
print(json.dumps(new))
"""


def test_the_zygote_has_imported_what_run_evaluate_and_report_import(tmp_path):
    db = str(tmp_path / "s.duckdb")
    calls = [["run", "--model", "sim:oracle", "--case", "fc-d1-001", "--no-report", "--db", db],
             ["evaluate", "--db", db], ["report", "--db", db, "--format", "html", "--out", str(tmp_path / "r.html")]]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", _NEW_MODULES, json.dumps(calls)], capture_output=True, text=True,
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT / "tests")}, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    for command, (code, modules) in json.loads(done.stdout).items():
        assert code == 0, command
        assert not [m for m in modules if m.split(".")[0] in HEAVY], (command, modules)
