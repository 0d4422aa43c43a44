"""`report` at size (issue 36): the CPU seconds and peak memory of `traceladder report` on judged
stores of many traces, every format, beside the anchor — the same summary as seven SQL aggregates
in `python -c "import duckdb; …"` — measured in the same run.

Stores are `tests/bulk_store.py`'s suite-shaped traces, judged by `traceladder evaluate` (built
once per size in `--cache`, or in a temporary directory). Each command runs `--repeat` times in a
child process; the figure is the median of its user + system CPU seconds (`os.wait4`), so other
work on the box shows as little as it can. Peak RSS is the child's `ru_maxrss` (the launcher, this
script, holds a few MB when it starts one).

    python bench/report_throughput.py [--sizes 10000,100000] [--formats text,json,junit,html]
                                      [--cache DIR] [--repeat 3] [--smoke] [--json]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

from measures import add_options, measure, reporting, work_dir  # bench/measures.py

ROOT = Path(__file__).resolve().parents[1]

# The summary `report` prints, as the fewest aggregates DuckDB needs: the anchor.
ANCHOR = """
import sys, duckdb
con = duckdb.connect(sys.argv[1], read_only=True)
r = "SELECT * FROM trace_results WHERE run_id = 'bulk'"
for q in [
    f"SELECT dimension, verdict, count(*) FROM ({r}) GROUP BY ALL",
    f"SELECT failure_class, count(*) FROM ({r}) WHERE verdict = 'FAIL' GROUP BY 1",
    f"SELECT f.tool, count(DISTINCT f.trace_id) FROM findings f SEMI JOIN ({r} AND verdict = 'FAIL') t "
    "USING (trace_id) GROUP BY 1",
    f"SELECT rung_name, k, avg(v) FROM (SELECT rung_name, unnest(map_keys(scores)) k, "
    f"unnest(map_values(scores)) v FROM rung_results SEMI JOIN ({r}) t USING (trace_id)) GROUP BY ALL",
    f"SELECT settled_at, count(*) FROM ({r}) WHERE verdict = 'FAIL' GROUP BY 1",
    f"SELECT rung_name, status, count(*) FROM rung_results SEMI JOIN ({r}) t USING (trace_id) GROUP BY ALL",
    f"SELECT count(*) FROM trace_judgments SEMI JOIN ({r}) t USING (trace_id)",
]:
    con.execute(q).fetchall()
"""

BUILD = """
import subprocess, sys
sys.path.insert(0, sys.argv[3])
from pathlib import Path
from bulk_store import bulk_store
bulk_store(Path(sys.argv[1]), int(sys.argv[2]))
done = subprocess.run([sys.executable, "-m", "traceladder", "evaluate", "--db", sys.argv[1]],
                      capture_output=True, text=True)
sys.exit(done.returncode and (print(done.stderr, file=sys.stderr) or 1))
"""


def store_of(cache: Path, traces: int) -> Path:
    """A judged bulk store of `traces` traces, built once (in a child: this process stays small)."""
    db = cache / f"bulk-{traces}.duckdb"
    if not db.exists():
        partial = db.with_suffix(".building")
        partial.unlink(missing_ok=True)
        print(f"building {traces:,} judged traces in {db}", flush=True)
        subprocess.run([sys.executable, "-c", BUILD, str(partial), str(traces), str(ROOT / "tests")],
                       cwd=ROOT, check=True)  # fmt: skip
        partial.rename(db)
    return db


def child(argv: list[str]) -> tuple[float, float]:
    """(CPU seconds, peak RSS MB) of one command run to its end; its output is discarded."""
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    err = proc.stderr.read().decode() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {err[-500:]}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def median_of(argv: list[str], repeat: int) -> tuple[float, float]:
    runs = [child(argv) for _ in range(repeat)]
    return statistics.median(c for c, _ in runs), max(m for _, m in runs)


def report_argv(db: Path, fmt: str, out: Path) -> list[str]:
    argv = [sys.executable, "-m", "traceladder", "report", "bulk", "--db", str(db)]
    if fmt == "text":
        return argv  # the terminal view, printed
    return [*argv, "--format", fmt, "--out", str(out)]


def run(args: argparse.Namespace, cache: Path) -> None:
    # Measured as an installed package runs: its modules compiled once (as `make test` does), not
    # from source in every child when the environment forbids writing bytecode (decision 432).
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "traceladder")], check=True)
    sizes = [int(s) for s in args.sizes.split(",")]
    formats = args.formats.split(",")
    for traces in sizes:
        db = store_of(cache, traces)
        anchor_cpu, anchor_mb = median_of([sys.executable, "-c", ANCHOR, str(db)], args.repeat)
        size = f"{traces // 1000}k" if traces >= 1000 else str(traces)
        measure(f"SQL-summary anchor, {size} traces", anchor_cpu, "CPU s")
        for fmt in formats:
            out = cache / f"report-{traces}.{fmt}"
            cpu, peak = median_of(report_argv(db, fmt, out), args.repeat)
            measure(f"report {fmt}, {size} traces", cpu, "CPU s", baseline=anchor_cpu,
                    baseline_name="SQL-summary anchor")  # fmt: skip
            measure(f"report {fmt}, {size} traces, peak RSS", peak, "MB", baseline=anchor_mb,
                    baseline_name="SQL-summary anchor")  # fmt: skip
            if out.exists():
                measure(f"report {fmt}, {size} traces, file size", out.stat().st_size / 1e6, "MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="traces per store, comma-separated")
    parser.add_argument("--formats", default="text,json,junit,html")
    parser.add_argument("--cache", type=Path, help="keep the judged stores here (built once)")
    parser.add_argument("--repeat", type=int, default=3)
    add_options(parser)
    args = parser.parse_args()
    if args.smoke:
        args.sizes, args.repeat = "100", 1
    with reporting(args), work_dir(args.cache) as where:
        run(args, where)


if __name__ == "__main__":
    main()
