"""Bounded memory for `report` (issue 36): the summary is counted in SQL and the per-trace results
are rendered a batch at a time (`store.run_report.BATCH_TRACES`), so the peak memory of the
real CLI does not grow with the run — measured as the child's peak RSS (`tests/peak_rss.py`), as
`evaluate`'s is in tests/evaluation/test_memory.py.

JSON, JUnit and the HTML page are measured at 2 and 10 batches of results; they page through
them by report-order key (decision 430: no table of every trace's position) and accept each
result with a compiled validator (decision 431). From 20k to 200k traces JSON still grew by ~30
MB, outside DuckDB's buffer pool (decision 433), so the larger sizes are not asserted here.
The text report reads no result: its summary is a few SQL aggregates, whose joins with the
per-trace tables run a partition of traces at a time under a small DuckDB cap (decision 350), so
it is measured at 20k and 200k traces against what a batch of results costs JSON. (The HTML page
folds every result a batch at a time and keeps only the cases it shows, decision 351.)
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from bulk_store import bulk_store, judged_runs_store
from conftest import ROOT, cli_in_process
from peak_rss import run_measuring_peak

from traceladder.store.db import Store
from traceladder.store.report_summary import Aggregates, aggregates
from traceladder.store.run_report import BATCH_TRACES, scope_of_run

_STORES: dict[int, Path] = {}


def _store(root: Path, traces: int) -> Path:
    """A judged bulk store of `traces` traces, all of run `bulk` (built once per test process)."""
    if traces not in _STORES:
        db = root / f"{traces}.duckdb"
        bulk_store(db, traces)
        done = cli_in_process("evaluate", "--db", str(db))  # set-up: `report` is measured
        assert done.returncode == 0, done.stderr
        _STORES[traces] = db
    return _STORES[traces]


def _two_runs(root: Path, traces: int) -> Path:
    """A store of `traces` judged traces split between the finished runs `bulk` and `bulk-b`."""
    db = root / f"two-runs-{traces}.duckdb"
    if not db.exists():
        judged_runs_store(db, traces)
    return db


def _command_peak_mb(db: Path, *argv: str, ok: tuple[int, ...] = (0,)) -> float:
    """The peak RSS of `traceladder ARGV --db DB`, pinned to one core."""
    err = db.with_suffix(".stderr")
    with err.open("wb") as errors:
        child = run_measuring_peak(
            [sys.executable, "-m", "traceladder", *argv, "--db", str(db)],
            peak_file=db.with_suffix(".peak"), one_core=True, cwd=ROOT,
            stdout=subprocess.DEVNULL, stderr=errors,
        )  # fmt: skip
    assert child.returncode in ok, err.read_text()
    return child.peak_mb


_PEAKS: dict[tuple[Path, str], float] = {}


def _peak_mb(db: Path, fmt: str) -> float:
    """The peak RSS of `report bulk --format FMT` on `db`, measured once per test process: what a
    batch of JSON results costs (1,000 traces' peak above 100's) is the yardstick of JSON's own
    bound, of the text summary's and of compare's, and each of the three tests used to measure it
    again (four more reports of the same store in the same format)."""
    if (db, fmt) not in _PEAKS:
        _PEAKS[db, fmt] = _measured_peak_mb(db, fmt)
    return _PEAKS[db, fmt]


def _measured_peak_mb(db: Path, fmt: str) -> float:
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


@pytest.mark.parametrize("fmt", ["json", "junit", "html"])
def test_a_streamed_report_does_not_grow_with_the_run(root, fmt):
    peaks = {
        n: _peak_mb(_store(root, n), fmt) for n in (100, BATCH_TRACES, 2 * BATCH_TRACES, 10 * BATCH_TRACES)
    }
    a_batch = peaks[BATCH_TRACES] - peaks[100]
    print(f"{fmt} peak RSS MB by traces: {peaks}")
    assert a_batch > 0, peaks
    assert peaks[10 * BATCH_TRACES] - peaks[2 * BATCH_TRACES] < a_batch, peaks


@pytest.mark.parametrize("fmt", ["text"])
def test_the_summary_does_not_grow_with_the_run(root, fmt):
    small, large = _peak_mb(_store(root, 20_000), fmt), _peak_mb(_store(root, 200_000), fmt)
    a_batch = _peak_mb(_store(root, BATCH_TRACES), "json") - _peak_mb(_store(root, 100), "json")
    print(f"{fmt} peak RSS MB: 20k {small}, 200k {large}; a batch of results {a_batch}")
    assert a_batch > 0, a_batch
    assert large - small < a_batch, (small, large, a_batch)


def test_compare_does_not_grow_with_the_runs(root):
    """`compare` joins the two runs' results by case in SQL and reads them a batch at a time
    (decision 480): before, it held both runs' whole reports (~14 KB a trace)."""
    small, large = (_command_peak_mb(_two_runs(root, n), "compare", "bulk", "bulk-b", ok=(0, 1))
                    for n in (2_000, 20_000))  # fmt: skip
    a_batch = _peak_mb(_store(root, BATCH_TRACES), "json") - _peak_mb(_store(root, 100), "json")
    print(f"compare peak RSS MB: 2k {small}, 20k {large}; a batch of results {a_batch}")
    assert a_batch > 0, a_batch
    assert large - small < a_batch, (small, large, a_batch)


def test_the_summary_counted_by_partitions_is_the_summary(root):
    """200k traces are joined in several partitions, 20k in one: the bulk store repeats the same
    500 traces, so every count of the larger is ten times the smaller's and every mean the same."""
    small, large = (_aggregates(_store(root, n)) for n in (20_000, 200_000))
    assert len(large.ladder) == len(small.ladder) > 0
    assert sorted((n, r, s, 10 * c) for n, r, s, c in small.ladder) == sorted(large.ladder)
    assert sorted((t, 10 * c) for t, c in small.tools) == sorted(large.tools) != []
    assert [s[:2] for s in small.scores] == [s[:2] for s in large.scores] != []
    assert all(abs(a[2] - b[2]) < 1e-9 for a, b in zip(small.scores, large.scores, strict=True))


def _aggregates(db: Path) -> Aggregates:
    with Store(db, read_only=True) as store, store.memory_limit("64MB", threads=1):
        return aggregates(store, scope_of_run(store, "bulk"))
