"""Stores built once per test session and shared by every pytest-xdist worker.

A session fixture runs once per *worker*, so each worker used to run the whole 72-case simulated
suite for itself before its first test that reads it. Here the first worker that needs a suite
runs it, the others wait on the same lock and then read the store it wrote:

- the folder is the session's, not the worker's: with xdist each worker's base temporary folder is
  `pytest-N/popen-gwK`, and `pytest-N` is common to the session and to no other session (several
  test sessions run at once on a shared machine, so the per-user root `pytest-of-USER` is not);
- `fcntl.flock` on a lock file serialises the build (released by the kernel if a worker dies);
  `done.json` is written last, atomically, so a build that started and has no `done.json` failed,
  and the next worker reports that failure instead of reading half a store;
- the tests only read the store (DuckDB admits any number of read-only processes); the fixture's
  teardown checks the file's SHA-256 is the one it was built with, so a test that wrote to the
  shared store fails the session instead of changing what the other tests see.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest


def session_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder every worker of this test session shares (the base temporary folder without
    xdist; its parent, `pytest-N`, with it)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def digest(path: Path) -> str:
    """The file's SHA-256: a shared store is checked unchanged at the end of the session."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def built_once(folder: Path, build: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """Run `build()` the first time any worker of the session asks for `folder`, under a lock;
    every caller gets the JSON record it returned (written last, atomically, as `done.json`)."""
    folder.mkdir(exist_ok=True)
    done = folder / "done.json"
    with open(folder / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not done.exists():
                assert not (folder / "started").exists(), (
                    f"an earlier build in {folder} failed; see its worker"
                )
                (folder / "started").touch()
                staged = folder / "done.json.tmp"
                staged.write_text(json.dumps(build()), encoding="utf-8")
                staged.replace(done)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return json.loads(done.read_text(encoding="utf-8"))


def shared_suite(
    tmp_path_factory: pytest.TempPathFactory, name: str, *args: str
) -> Iterator[tuple[Path, subprocess.CompletedProcess[str]]]:
    """`traceladder run --db STORE ARGS` once per session: yields (store, `run`'s result) to every
    worker, and checks at teardown that the store is unchanged."""
    from conftest import cli

    folder = session_folder(tmp_path_factory) / f"shared-suite-{name}"
    db = folder / "store.duckdb"

    def build() -> dict[str, Any]:
        result = cli("run", "--db", str(db), *args)
        assert result.returncode == 0, result.stderr
        return {"returncode": result.returncode, "stdout": result.stdout, "stderr": result.stderr,
                "sha256": digest(db)}  # fmt: skip

    built = built_once(folder, build)
    result = subprocess.CompletedProcess(
        ["traceladder", "run", "--db", str(db), *args], built["returncode"], built["stdout"], built["stderr"]
    )
    yield db, result
    assert digest(db) == built["sha256"], f"a test wrote to the shared {name} suite's store {db}"
