"""Bounded memory (issue 24): `evaluate` reads, judges and writes a batch at a time, so the peak
memory of the real CLI does not grow with the store — measured as the child's peak RSS
(`os.wait4`) on stores of one batch and of ten, against what one batch costs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import duckdb
from bulk_store import bulk_store
from conftest import ROOT

from traceladder.evaluation.evaluate import BATCH_TRACES


def _peak_mb(db) -> float:
    """Peak RSS of `traceladder evaluate --db DB` (the largest of it and its worker processes)."""
    child = subprocess.Popen(
        [sys.executable, "-m", "traceladder", "evaluate", "--db", str(db)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT,
    )  # fmt: skip
    _, status, usage = os.wait4(child.pid, 0)
    assert child.stderr is not None
    assert os.waitstatus_to_exitcode(status) == 0, child.stderr.read().decode()
    child.stderr.close()
    return usage.ru_maxrss / 1024  # KiB on Linux


def test_evaluate_peak_memory_does_not_grow_with_the_store(tmp_path):
    sizes = {"tiny": 200, "one batch": BATCH_TRACES, "ten batches": 10 * BATCH_TRACES}
    peaks = {}
    for name, traces in sizes.items():
        db = tmp_path / f"{traces}.duckdb"
        bulk_store(db, traces)
        peaks[name] = _peak_mb(db)
        con = duckdb.connect(str(db), read_only=True)
        judged = con.execute("SELECT count(*), count(DISTINCT verdict) FROM trace_results").fetchone()
        con.close()
        assert judged == (traces, 2)  # every trace judged (PASS and FAIL), once
    a_batch = peaks["one batch"] - peaks["tiny"]
    assert a_batch > 0, peaks
    assert peaks["ten batches"] - peaks["one batch"] < a_batch, peaks


def test_an_interrupted_evaluate_keeps_every_batch_it_finished(tmp_path):
    db = tmp_path / "store.duckdb"
    traces = 2 * BATCH_TRACES + BATCH_TRACES // 2  # batches of 20k, 20k and 10k
    bulk_store(db, traces)
    wal = db.with_name(db.name + ".wal")

    def written() -> tuple:
        return tuple((p.stat().st_size, p.stat().st_mtime_ns) if p.exists() else None for p in (db, wal))

    before = written()
    child = subprocess.Popen(
        [sys.executable, "-m", "traceladder", "evaluate", "--db", str(db)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT,
    )  # fmt: skip
    try:
        while child.poll() is None and written() == before:  # until the first commit reaches the file
            time.sleep(0.02)
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait(timeout=60)
    con = duckdb.connect(str(db))
    try:
        (judged,) = con.execute("SELECT count(*) FROM trace_results").fetchone() or (None,)
        (rungs,) = con.execute("SELECT count(DISTINCT trace_id) FROM rung_results").fetchone() or (None,)
    finally:
        con.close()
    assert judged in (BATCH_TRACES, 2 * BATCH_TRACES) and rungs == judged  # whole batches, kept
    done = subprocess.run(
        [sys.executable, "-m", "traceladder", "evaluate", "--db", str(db)], capture_output=True, text=True,
        cwd=ROOT, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute("SELECT count(*), count(DISTINCT trace_id) FROM trace_results").fetchone() == (
            traces,
            traces,
        )
    finally:
        con.close()
