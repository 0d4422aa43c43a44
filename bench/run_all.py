"""`make bench`: every bench script in one run, then one table of what they measured.

Each script runs in its own process with `--json` (bench/measures.py): its prose goes to this
process's stderr as it runs, its result lines are collected, and at the end one table is printed:
measure, figure, in-run baseline, ratio, load average. A script that fails makes the whole run
exit 1 (after the others ran), naming it.

    python bench/run_all.py [--smoke] [SCRIPT ...]     # default: every script in bench/
    python bench/run_all.py --list                     # the scripts it would run

A script is any bench/*.py with a `__main__` block (modules such as workload.py and measures.py
have none), so a new script joins `make bench` and the smoke test without being listed anywhere.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from measures import RESULT_KEYS  # bench/measures.py

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent


def bench_scripts() -> list[Path]:
    """Every runnable script in bench/ but this one, in name order."""
    return [
        path
        for path in sorted(BENCH.glob("*.py"))
        if path.name != Path(__file__).name and 'if __name__ == "__main__":' in path.read_text()
    ]


def run_script(path: Path, smoke: bool) -> tuple[list[dict], int, float]:
    """(result lines, exit code, wall seconds) of one script run with --json. A line on its stdout
    that is not a result breaks the protocol (bench/measures.py): the run counts as failed."""
    command = [sys.executable, str(path), "--json", *(["--smoke"] if smoke else [])]
    print(f"== {path.name} {' '.join(command[3:])}", file=sys.stderr, flush=True)
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=ROOT, stdout=subprocess.PIPE, text=True, check=False)
    results = []
    for line in proc.stdout.splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            row = None
        if isinstance(row, dict) and set(row) == set(RESULT_KEYS):
            results.append(row)
        elif line.strip():
            print(f"run_all: {path.name}: not a result line on stdout: {line[:200]}", file=sys.stderr)
            proc.returncode = proc.returncode or 1
    return results, proc.returncode, time.perf_counter() - start


def _number(value: object) -> str:
    if value is None:
        return "—"
    assert isinstance(value, int | float)
    return f"{value:,.3g}" if abs(value) < 100 else f"{value:,.0f}"


def table(results: list[dict]) -> str:
    """The one table: measure, figure, in-run baseline, ratio, load average."""
    header = ("measure", "figure", "unit", "in-run baseline", "figure/baseline", "load 1m")
    rows = [
        (
            f"{r['script']}: {r['measure']}",
            _number(r["figure"]),
            str(r["unit"]),
            f"{_number(r['baseline'])} ({r['baseline_name']})" if r.get("baseline") else "—",
            f"{r['ratio']:.2f}x" if r.get("ratio") is not None else "—",
            f"{r['load_1m']:.1f}",
        )
        for r in results
    ]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = [
        " | ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in [header, tuple("-" * w for w in widths), *rows]
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--smoke", action="store_true", help="every script at its tiny --smoke size")
    parser.add_argument("--list", action="store_true", help="print the scripts it would run, then exit")
    parser.add_argument("scripts", nargs="*", type=Path, help="scripts to run (default: all of bench/)")
    args = parser.parse_args()
    scripts = [path.resolve() for path in args.scripts] or bench_scripts()
    if args.list:
        print("\n".join(path.name for path in scripts))
        return 0
    cores = len(os.sched_getaffinity(0))
    print(f"cores={cores} load_average_1m={os.getloadavg()[0]:.1f} (other programs may share them)")
    results: list[dict] = []
    failed: list[str] = []
    for path in scripts:
        rows, code, seconds = run_script(path, args.smoke)
        print(f"== {path.name}: exit {code}, {seconds:.1f} s, {len(rows)} measure(s)", file=sys.stderr)
        if code != 0 or not rows:
            failed.append(f"{path.name} (exit {code}, {len(rows)} measures)")
        results += rows
    print(table(results))
    if failed:
        print(f"run_all: failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
