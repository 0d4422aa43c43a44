"""CLI start-up: CPU seconds of `traceladder --version`, `sql "SELECT 1"`, `report` and `gate`,
against `python -c "import duckdb"` measured in the same run (the floor: every command needs
DuckDB). Goal: at most 1.5x that baseline for the commands that need no model client, Arrow or
OTel SDK.

CPU seconds (user + system of the child, from getrusage), not wall seconds: on a shared box the
wall time of a short process is mostly waiting for a core, its CPU time is what it costs. Each
command runs `--repeat` times after one warm-up run; the median is reported.

Bytecode as users get it: pip compiles an installed package's `.pyc` files, but an editable
checkout on a machine with PYTHONDONTWRITEBYTECODE set would compile our source on every command
(~40 ms of the figure). The children therefore run with bytecode writing on, into a temporary
PYTHONPYCACHEPREFIX per side, and the warm-up fills it — for DuckDB and the baseline too.

    python bench/cli_startup.py [--repeat 5] [--smoke] [--json]
    python bench/cli_startup.py --against c657752       # before/after in one run

`--against REF` measures REF's CLI too (a temporary `git worktree`), alternating this checkout
and REF command by command, and prints both medians and their ratio.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from measures import add_options, measure, reporting  # bench/measures.py

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ("import duckdb", [sys.executable, "-c", "import duckdb"])


def store_floor(db: Path) -> list[str]:
    """The least any store command does: import DuckDB, open the file read-only, read one table.
    Printed beside the baseline so the figures say how much of a command is ours."""
    code = f"import duckdb; duckdb.connect({str(db)!r}, read_only=True).sql('SELECT name FROM schema_migrations').fetchall()"
    return [sys.executable, "-c", code]


def commands(db: Path) -> list[tuple[str, list[str]]]:
    """(label, argv after `python -m traceladder`) of each command measured."""
    return [
        ("--version", ["--version"]),
        ('sql "SELECT 1"', ["sql", "--db", str(db), "SELECT 1"]),
        ("report", ["report", "--db", str(db)]),
        ("gate", ["gate", "--db", str(db), "--min-pass-rate", "0"]),
    ]


def cpu_seconds(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    """User + system CPU seconds of one child process (and anything it waited for)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):  # gate exits 1 when it fails: still a measured start-up
        raise SystemExit(f"{argv} exited {proc.returncode}: {proc.stderr.decode()[-500:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def make_store(db: Path) -> None:
    """A store holding one finished, evaluated run (one case on the simulator), for report and gate."""
    subprocess.run(
        [sys.executable, "-m", "traceladder", "run", "--db", str(db), "--model", "sim:faulty",
         "--case", "fc-d4-001"],
        cwd=ROOT, check=True, capture_output=True,
    )  # fmt: skip


@contextmanager
def checkout(ref: str) -> Iterator[Path]:
    """A temporary worktree of `ref`, removed afterwards."""
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "ref"
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), ref], cwd=ROOT, check=True,
                       capture_output=True)  # fmt: skip
        try:
            yield tree
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=False)


def side(tree: Path, pycache: Path) -> tuple[Path, dict[str, str]]:
    """(cwd, environment) that make `python -m traceladder` import the package of `tree`: the
    working directory and PYTHONPATH come before the editable install's finder. Bytecode is
    written to (and read from) `pycache`, as an installed package's would be."""
    env = {**os.environ, "PYTHONPATH": str(tree), "COLUMNS": "120", "PYTHONPYCACHEPREFIX": str(pycache)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    found = subprocess.run(
        [sys.executable, "-c", "import traceladder; print(traceladder.__file__)"],
        cwd=tree, env=env, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert found.startswith(str(tree)), f"{tree}: imported {found}"
    return tree, env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--against", metavar="REF", help="also measure another commit's CLI, in this run")
    add_options(parser)
    args = parser.parse_args()
    if args.smoke:
        args.repeat = 1
    with reporting(args):
        run(args)


def run(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "startup.duckdb"
        make_store(db)
        sides = {"this": side(ROOT, Path(tmp) / "pycache-this")}
        with checkout(args.against) if args.against else _none() as tree:
            if tree is not None:
                sides[args.against] = side(tree, Path(tmp) / "pycache-ref")
            timings: dict[tuple[str, str], list[float]] = {}
            cwd, env = sides["this"]
            cpu_seconds(BASELINE[1], cwd, env)  # warm-up: bytecode compiled once, not measured
            for _label, argv in commands(db):
                for side_cwd, side_env in sides.values():
                    cpu_seconds([sys.executable, "-m", "traceladder", *argv], side_cwd, side_env)
            for _ in range(args.repeat):
                timings.setdefault(("-", BASELINE[0]), []).append(cpu_seconds(BASELINE[1], cwd, env))
                timings.setdefault(("-", "floor"), []).append(cpu_seconds(store_floor(db), cwd, env))
                for label, argv in commands(db):
                    for name, (cwd, env) in sides.items():  # alternate the sides, command by command
                        seconds = cpu_seconds([sys.executable, "-m", "traceladder", *argv], cwd, env)
                        timings.setdefault((name, label), []).append(seconds)
    base = statistics.median(timings[("-", BASELINE[0])])
    floor = statistics.median(timings[("-", "floor")])
    print(f"CPU seconds, median of {args.repeat}; baseline python -c 'import duckdb': {base:.3f} s")
    print(f"  floor of a store command (import duckdb, open the store, one query): {floor:.3f} s "
          f"({floor / base:.2f}x)")  # fmt: skip
    print(f"  {'command':18} " + " ".join(f"{name[:12]:>12} {'x base':>7}" for name in sides))
    for label, _ in commands(db):
        cells = []
        for name in sides:
            seconds = statistics.median(timings[(name, label)])
            cells.append(f"{seconds:>12.3f} {seconds / base:>6.2f}x")
        print(f"  {label:18} " + " ".join(cells))
        this = statistics.median(timings[("this", label)])
        measure(
            f"traceladder {label}", this, "CPU s", baseline=base, baseline_name="python -c 'import duckdb'"
        )
        if args.against:
            before = statistics.median(timings[(args.against, label)])
            print(f"  {'':18} {args.against}: {before:.3f} s -> this: {this:.3f} s ({this / before:.2f}x)")


@contextmanager
def _none() -> Iterator[None]:
    yield None


if __name__ == "__main__":
    main()
