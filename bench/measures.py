"""How every bench script reports, so `make bench` (bench/run_all.py) can put all of them in one table
and a test can run all of them at a tiny size (tests/project/test_bench_smoke.py).

A script calls `add_options(parser)` (adds `--smoke` and `--json`), runs under `reporting(args)`
and calls `measure(...)` once per figure it wants in the table:

* `--smoke`: the script's own tiny sizes (seconds, not minutes). The figures mean nothing; what
  the smoke run proves is that every code path the script drives still exists and runs.
* `--json`: stdout carries only result lines, one JSON object per measure (`RESULT_KEYS`); the
  script's human-readable prints go to stderr. Without `--json`, each measure is also printed as
  one readable line next to the script's own output.

A measure is one figure with its unit, the in-run baseline it is compared with (measured in the
same run, on the same box: machines are noisy, only ratios within one run mean anything), the
ratio figure/baseline, and the 1-minute load average when it was taken (the box is shared).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

RESULT_KEYS = ("script", "measure", "figure", "unit", "baseline", "baseline_name", "ratio", "load_1m")
_state = {"json": False}


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--smoke", action="store_true", help="tiny sizes: proves the script runs (figures mean nothing)"
    )
    parser.add_argument(
        "--json", action="store_true", help="stdout: one JSON result line per measure (prose goes to stderr)"
    )


@contextlib.contextmanager
def work_dir(cache: Path | None) -> Iterator[Path]:
    """`--cache DIR` (created; kept, so a second run reuses what the first built), else a
    temporary directory removed afterwards."""
    if cache:
        cache.mkdir(parents=True, exist_ok=True)
        yield cache
        return
    with tempfile.TemporaryDirectory() as tmp:
        yield Path(tmp)


@contextlib.contextmanager
def reporting(args: argparse.Namespace) -> Iterator[None]:
    """With --json, everything the script prints goes to stderr, so stdout holds result lines only."""
    _state["json"] = bool(args.json)
    if not args.json:
        yield
        return
    with contextlib.redirect_stdout(sys.stderr):
        yield


def cpu_seconds() -> float:
    """User + system CPU seconds of this process and of every child it has waited for (a pool's
    workers, a `serve` subprocess and its workers): what a figure cost, whatever else shares the
    cores. Per-core figures divide by this, not by wall time."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measure(
    name: str,
    figure: float,
    unit: str,
    *,
    baseline: float | None = None,
    baseline_name: str | None = None,
) -> dict[str, object]:
    """Report one figure. `ratio` is figure ÷ baseline, whatever the unit: for a rate above 1 is
    faster than the baseline, for seconds or µs above 1 is slower."""
    ratio = figure / baseline if baseline else None
    result = {
        "script": Path(sys.argv[0]).stem,
        "measure": name,
        "figure": figure,
        "unit": unit,
        "baseline": baseline,
        "baseline_name": baseline_name,
        "ratio": ratio,
        "load_1m": os.getloadavg()[0],
    }
    if _state["json"]:
        print(json.dumps(result), file=sys.__stdout__, flush=True)
    else:
        against = f"  baseline {baseline:,.4g} ({baseline_name}) ratio {ratio:.2f}x" if ratio else ""
        print(f"measure {name}: {figure:,.4g} {unit}{against}  load {result['load_1m']:.1f}", flush=True)
    return result
