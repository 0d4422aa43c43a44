"""A run reads and validates its case suite once: the runner, the progress line's code-rung
verdicts and the evaluation after the run share the cases read at the start, instead of each
opening and validating the file again. Counted with a Python audit hook on the real entry point."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import traceladder

SHIPPED = Path(traceladder.__file__).parent / "suite" / "domain" / "retail" / "data" / "retail_fc.jsonl"

# Runs `python -m traceladder ARGS…` in this process, counting every open() of the suite file.
COUNTING = r"""
import runpy, sys
suite, argv = sys.argv[1], sys.argv[2:]
opened = []
sys.addaudithook(lambda event, args: opened.append(1) if event == "open" and str(args[0]) == suite else None)
sys.argv = ["traceladder", *argv]
try:
    runpy.run_module("traceladder", run_name="__main__", alter_sys=True)
finally:
    print(f"suite-opened={len(opened)}", file=sys.stderr)
"""


def _opens(suite: Path, *args: str) -> tuple[int, subprocess.CompletedProcess[str]]:
    result = subprocess.run(
        [sys.executable, "-c", COUNTING, str(suite), *args], capture_output=True, text=True, timeout=300
    )
    counts = [line for line in result.stderr.splitlines() if line.startswith("suite-opened=")]
    assert counts, result.stderr
    return int(counts[-1].split("=")[1]), result


def test_a_run_with_its_report_opens_the_suite_once(tmp_path):
    suite = tmp_path / "cases.jsonl"
    shutil.copyfile(SHIPPED, suite)
    db = tmp_path / "s.duckdb"
    opened, result = _opens(
        suite, "run", "--db", str(db), "--cases", str(suite), "--case", "fc-d1-001", "--case", "fc-d1-002",
        "--model", "sim:oracle",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "report_path=" in result.stdout  # evaluated and reported, with per-case progress lines
    assert opened == 1


def test_baseline_init_opens_the_suite_once_for_all_its_runs(tmp_path):
    suite = tmp_path / "cases.jsonl"
    shutil.copyfile(SHIPPED, suite)
    db = tmp_path / "s.duckdb"
    opened, result = _opens(
        suite, "baseline", "init", "--db", str(db), "--cases", str(suite), "--case", "fc-d1-001",
        "--model", "sim:oracle", "--runs", "3", "--dir", str(tmp_path / "b"),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert opened == 1
