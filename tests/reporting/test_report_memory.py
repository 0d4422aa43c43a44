"""Bounded memory for `report` (issue 36): the summary is counted in SQL and the per-trace results
are rendered a batch at a time (`storage.run_report.BATCH_TRACES`), so the peak memory of the
real CLI does not grow with the run — measured as the child's peak RSS (`tests/peak_rss.py`), as
`evaluate`'s is in tests/evaluation/test_memory.py.

JSON and JUnit validate every result against ReportV1 as they write it (~2-4 ms a result with
jsonschema, the cost of the whole-document check before), so they are measured at 2 and 10
batches: what grows with the run shows as well, in minutes instead of a quarter of an hour.
(The text report reads no result; its summary queries still grow DuckDB's peak by ~0.12 KB a
trace — 107 MB at 20k traces, 130 MB at 200k — see decision 243.)
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from bulk_store import bulk_store
from conftest import ROOT, cli
from peak_rss import run_measuring_peak

from traceladder.storage.run_report import BATCH_TRACES

_STORES: dict[int, Path] = {}


def _store(root: Path, traces: int) -> Path:
    """A judged bulk store of `traces` traces, all of run `bulk` (built once per test process)."""
    if traces not in _STORES:
        db = root / f"{traces}.duckdb"
        bulk_store(db, traces)
        done = cli("evaluate", "--db", str(db), timeout=1200)
        assert done.returncode == 0, done.stderr
        _STORES[traces] = db
    return _STORES[traces]


def _peak_mb(db: Path, fmt: str) -> float:
    out = db.with_suffix(f".{fmt}")
    err = db.with_suffix(".stderr")
    with err.open("wb") as errors:
        child = run_measuring_peak(
            [sys.executable, "-m", "traceladder", "report", "bulk", "--db", str(db), "--format", fmt,
             "--out", str(out)],
            peak_file=db.with_suffix(".peak"), one_core=True, cwd=ROOT,
            stdout=subprocess.DEVNULL, stderr=errors,
        )  # fmt: skip
    assert child.returncode == 0, err.read_text()
    assert out.stat().st_size > 0
    return child.peak_mb


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("report-memory")


@pytest.mark.parametrize("fmt", ["json", "junit"])
def test_a_streamed_report_does_not_grow_with_the_run(root, fmt):
    peaks = {
        n: _peak_mb(_store(root, n), fmt) for n in (100, BATCH_TRACES, 2 * BATCH_TRACES, 10 * BATCH_TRACES)
    }
    a_batch = peaks[BATCH_TRACES] - peaks[100]
    print(f"{fmt} peak RSS MB by traces: {peaks}")
    assert a_batch > 0, peaks
    assert peaks[10 * BATCH_TRACES] - peaks[2 * BATCH_TRACES] < a_batch, peaks
