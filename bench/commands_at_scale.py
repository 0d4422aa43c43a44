"""Every reading command at size (issue 36, point 5): CPU seconds and peak RSS of `report` (every
format), `gate`, `compare`, `trend`, `watch --once`, `export`, `sql` and `cases from-traces
--sample` on judged stores of 10k, 100k and 1M spans, beside the anchor — `python -c "import
duckdb; …"` counting the store's spans — measured in the same run.

A store is `tests/bulk_store.py`'s suite-shaped traces (one invoke_agent root each) plus one
`execute_tool` span per tool call (so ~4.5 spans a trace), its traces split between two runs
(`bulk`, `bulk-b`, recorded in `runs` as two finished runs of the retail suite, so `gate` and
`compare` have runs to read), then judged by `traceladder evaluate`. Built once per size in
`--cache` (1M spans: ~220k traces, a few minutes), or in a temporary directory. Each command runs
in a child process; the figure is its user + system CPU seconds and `ru_maxrss` (`os.wait4`).

    python bench/commands_at_scale.py [--spans 10000,100000,1000000] [--cache DIR] [--smoke] [--json]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

from measures import add_options, measure, reporting, work_dir  # bench/measures.py

ROOT = Path(__file__).resolve().parents[1]
SPANS_PER_TRACE = 4.5  # the bulk template's root + ~3.5 tool calls, measured when built

BUILD = """
import sys
sys.path.insert(0, sys.argv[3])
from pathlib import Path
from bulk_store import judged_runs_store
judged_runs_store(Path(sys.argv[1]), int(sys.argv[2]))
"""

ANCHOR = """
import sys, duckdb
con = duckdb.connect(sys.argv[1], read_only=True)
con.execute("SELECT count(*), count(DISTINCT trace_id) FROM spans").fetchall()
"""


def store_of(cache: Path, spans: int) -> Path:
    """A judged two-run store of about `spans` spans, built once (in a child)."""
    db = cache / f"scale-{spans}.duckdb"
    if not db.exists():
        partial = db.with_suffix(".building")
        partial.unlink(missing_ok=True)
        print(f"building ~{spans:,} spans in {db}", flush=True)
        subprocess.run([sys.executable, "-c", BUILD, str(partial), str(round(spans / SPANS_PER_TRACE)),
                        str(ROOT / "tests")], cwd=ROOT, check=True)  # fmt: skip
        partial.rename(db)
    return db


def commands(db: Path, out: Path) -> dict[str, list[str]]:
    """Each command measured, by name: its arguments after `traceladder`."""
    at = ["--db", str(db)]
    return {
        "report text": ["report", "bulk", *at],
        "report json": ["report", "bulk", *at, "--format", "json", "--out", str(out / "r.json")],
        "report junit": ["report", "bulk", *at, "--format", "junit", "--out", str(out / "r.xml")],
        "report html": ["report", "bulk", *at, "--format", "html", "--out", str(out / "r.html")],
        "gate": ["gate", *at, "--run", "bulk", "--min-pass-rate", "0", "--allow-partial"],
        "compare": ["compare", *at, "bulk", "bulk-b"],
        "trend": ["trend", *at],
        "watch --once": ["watch", *at, "--once"],
        "export": ["export", *at, "--out", str(out / "export")],
        "sql": ["sql", *at, "SELECT count(*) AS spans FROM spans"],
        "cases from-traces --sample": [
            "cases",
            "from-traces",
            *at,
            "--sample",
            "20",
            "--skip-bad",
            "--out",
            str(out / "cases"),
        ],  # fmt: skip
    }


OK_EXITS = {"gate": {0, 1}, "compare": {0, 1}, "cases from-traces --sample": {0, 2}}


def child(argv: list[str], ok: set[int]) -> tuple[float, float]:
    """(CPU seconds, peak RSS MB) of one command run to its end; its output is discarded."""
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = proc.stderr.read().decode() if proc.stderr else ""
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) not in ok:
        raise SystemExit(f"{' '.join(argv)} failed: {err[-500:]}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def run(args: argparse.Namespace, cache: Path) -> None:
    # As an installed package runs: its modules compiled once (decision 432).
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "traceladder")], check=True)
    for spans in (int(s) for s in args.spans.split(",")):
        db = store_of(cache, spans)
        size = f"{spans // 1_000_000}M" if spans >= 1_000_000 else f"{spans // 1000}k"
        anchor_cpu, anchor_mb = child([sys.executable, "-c", ANCHOR, str(db)], {0})
        measure(f"count spans anchor, {size} spans", anchor_cpu, "CPU s")
        for name, argv in commands(db, cache / "out").items():
            shutil.rmtree(cache / "out", ignore_errors=True)
            (cache / "out").mkdir()
            cpu, peak = child([sys.executable, "-m", "traceladder", *argv], OK_EXITS.get(name, {0}))
            measure(
                f"{name}, {size} spans", cpu, "CPU s", baseline=anchor_cpu, baseline_name="count spans anchor"
            )
            measure(f"{name}, {size} spans, peak RSS", peak, "MB", baseline=anchor_mb,
                    baseline_name="count spans anchor")  # fmt: skip
        shutil.rmtree(cache / "out", ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", default="10000,100000,1000000", help="spans per store, comma-separated")
    parser.add_argument("--cache", type=Path, help="keep the judged stores here (built once)")
    add_options(parser)
    args = parser.parse_args()
    if args.smoke:
        args.spans = "2000"
    with reporting(args), work_dir(args.cache) as where:
        run(args, where)


if __name__ == "__main__":
    main()
