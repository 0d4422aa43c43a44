"""Benchmarks that cannot rot: every bench script runs here at its `--smoke` size, through the
same aggregator `make bench` uses, so a moved function or a changed table breaks this test, not
the next person's benchmark. The aggregator refuses a script whose stdout is not result lines
(`--json`), so the protocol is checked too. Nothing here asserts on time: the figures of a smoke
run mean nothing.

The scripts are found by globbing bench/ (any file with a `__main__` block), so a new script is
covered without being listed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
AGGREGATOR = BENCH / "run_all.py"
SCRIPTS = sorted(
    path
    for path in BENCH.glob("*.py")
    if path != AGGREGATOR and 'if __name__ == "__main__":' in path.read_text()
)


def test_the_glob_finds_the_scripts_make_bench_runs():
    listed = subprocess.run(
        [sys.executable, str(AGGREGATOR), "--list"], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout.split()
    assert listed == [path.name for path in SCRIPTS]
    assert {"exporter_throughput.py", "suite_walltime.py", "cli_startup.py"} <= set(listed)


@pytest.mark.parametrize("script", SCRIPTS, ids=[path.stem for path in SCRIPTS])
def test_each_script_runs_at_its_smoke_size_and_reports_measures(script: Path):
    out = subprocess.run(
        [sys.executable, str(AGGREGATOR), "--smoke", str(script)],
        capture_output=True, text=True, cwd=ROOT, timeout=600,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("measure "))
    assert [cell.strip() for cell in lines[header].split(" | ")] == [
        "measure", "figure", "unit", "in-run baseline", "figure/baseline", "load 1m"
    ]  # fmt: skip
    rows = [[cell.strip() for cell in line.split(" | ")] for line in lines[header + 2 :]]
    assert rows and all(row[0].startswith(f"{script.stem}: ") for row in rows), out.stdout
    # every script compares at least one figure with a baseline measured in the same run
    assert any(row[3] != "—" and row[4].endswith("x") for row in rows), out.stdout
