"""Bounded memory for `report` (issue 36): the summary is counted in SQL and the per-trace results
are rendered a batch at a time (`storage.run_report.BATCH_TRACES`), so the peak memory of the
real CLI does not grow with the run — measured as the child's peak RSS (`tests/peak_rss.py`), as
`evaluate`'s is in tests/evaluation/test_memory.py.

Every format is measured at 20k and 200k traces against what a batch of results costs JSON. The
text report reads no result: its summary is a few SQL aggregates, whose joins with the per-trace
tables run a partition of traces at a time under a small DuckDB cap (decision 350). JSON, JUnit
and the HTML page (which folds every result and keeps only the cases it shows, decision 351) page
through the results by report-order key, holding no table of every trace's position (~0.27 KB a
trace before, decision 430), and accept each result with a compiled validator (decision 431:
~0.01 ms a result instead of jsonschema's ~3, so 200k results take about a minute, not hours).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from bulk_store import bulk_store
from conftest import ROOT, cli
from peak_rss import run_measuring_peak

from traceladder.storage.db import Store
from traceladder.storage.run_report import BATCH_TRACES, Aggregates, aggregates, scope_of_run

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


@pytest.mark.parametrize("fmt", ["text", "json", "junit", "html"])
def test_no_format_grows_with_the_run(root, fmt):
    small, large = _peak_mb(_store(root, 20_000), fmt), _peak_mb(_store(root, 200_000), fmt)
    a_batch = _a_batch(root)
    print(f"{fmt} peak RSS MB: 20k {small}, 200k {large}; a batch of results {a_batch}")
    assert large - small < a_batch, (small, large, a_batch)


_BATCH: list[float] = []


def _a_batch(root: Path) -> float:
    """What a batch of results costs JSON: the peak of a run of one batch over one of 100 traces."""
    if not _BATCH:
        _BATCH.append(_peak_mb(_store(root, BATCH_TRACES), "json") - _peak_mb(_store(root, 100), "json"))
        assert _BATCH[0] > 0, _BATCH
    return _BATCH[0]


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
