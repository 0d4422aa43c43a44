"""The open path at 1M agent spans (issue 36, point 2): `evaluate --no-judge` on a store of
traces without a case, CPU seconds and peak RSS, beside the anchor — `python -c "import duckdb;
…"` counting the store's spans — measured in the same run. The command reads under DuckDB's 64 MB cap with no roomy retry to fall
back on (decision 550): a read that outgrew it would fail the run, and the bench with it.

Store (decision 244's case, rebuilt): `--requests` OTLP requests of `tests/otlp_workload.py` (512
agent spans each, chat spans carrying whole message histories: ~4 KB of attributes a span)
ingested — so the extraction stage indexes them and writes their tool calls and definitions —
then every row of the spans, the trace index and the derived tables copied under `--copies` more
sets of trace ids in SQL, so every trace of the store is indexed and has its calls. 100 requests
and 19 copies: 1,024,000 spans, ~53,500 traces. Built once in `--cache`; each measured run judges
a fresh copy of it.

    python bench/open_path_at_scale.py [--requests 100] [--copies 19] [--cache DIR] [--checkout LABEL=DIR]
                                       [--smoke] [--json]

`--checkout` (repeatable, `label=DIR`) measures the command as another checkout of the project has
it (its package imported from DIR, with this interpreter) in the same run, alternating with this
one: `git archive main | tar -x -C DIR` gives main's.
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

BUILD = """
import sys
sys.path.insert(0, sys.argv[4])
from pathlib import Path
import otlp_workload
from traceladder.receive.ingest.run import ingest
from traceladder.store import Store
db, requests, copies = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
lines = [otlp_workload.to_otlp_json(b) for b in otlp_workload.make_requests(requests, seed=7)]
src = db.with_suffix(".jsonl")
src.write_bytes(b"\\n".join(lines) + b"\\n")
with Store(db) as store:
    summary = ingest(store, [str(src)])
    assert not summary.problems, summary.problems
    conn = store.conn
    tables = [t for (t,) in conn.execute(
        "SELECT c.table_name FROM duckdb_columns() c JOIN duckdb_tables() t USING (table_name) "
        "WHERE c.column_name = 'trace_id' ORDER BY 1").fetchall()]
    filled = [t for t in tables if conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]]
    conn.execute("CREATE TEMP TABLE originals AS SELECT DISTINCT trace_id FROM spans")
    for k in range(1, copies + 1):
        for t in filled:
            conn.execute(
                f"INSERT INTO {t} SELECT * REPLACE (md5('{k}:' || trace_id) AS trace_id) "
                f"FROM {t} SEMI JOIN originals USING (trace_id)"
            )
    conn.execute("CHECKPOINT")
    print("copied", filled, conn.execute("SELECT count(*), count(DISTINCT trace_id) FROM spans").fetchall(), file=sys.stderr)
src.unlink()
"""

ANCHOR = """
import sys, duckdb
con = duckdb.connect(sys.argv[1], read_only=True)
con.execute("SELECT count(*), count(DISTINCT trace_id) FROM spans").fetchall()
"""


# The command, counting the reads evaluate ran again at its roomy cap (`roomy_read`'s retry) apart
# from the passes that take the roomy cap from the start (the conversation pass, decision 534) —
# a wrapper, so another checkout's code is measured unchanged.
LAUNCH = """
import atexit, sys
from traceladder.evaluate import passes as evaluate
from traceladder.store.db import Store
limit, roomy = Store.memory_limit, []
def counting(self, size, **kw):
    if size == evaluate.DUCKDB_MEMORY_ROOMY:
        roomy.append(sys._getframe(1).f_code.co_name == "roomy_read")
    return limit(self, size, **kw)
Store.memory_limit = counting
atexit.register(lambda: print(
    f"{evaluate.__file__}: roomy retries: {sum(roomy)}, passes at the roomy cap: {len(roomy) - sum(roomy)}",
    file=sys.stderr))
from traceladder.cli.main import main
sys.argv[0] = "traceladder"
raise SystemExit(main())
"""


def store_of(cache: Path, requests: int, copies: int) -> Path:
    """The unjudged store of `requests` ingested OTLP requests and `copies` copies, built once."""
    db = cache / f"open-path-{requests}x{copies + 1}.duckdb"
    if not db.exists():
        partial = db.with_suffix(".building")
        partial.unlink(missing_ok=True)
        print(f"building {requests * 512 * (copies + 1):,} spans in {db}", flush=True)
        subprocess.run([sys.executable, "-c", BUILD, str(partial), str(requests), str(copies),
                        str(ROOT / "tests")], cwd=ROOT, check=True)  # fmt: skip
        partial.rename(db)
    return db


def child(argv: list[str], cwd: Path) -> tuple[float, float, str]:
    """(CPU seconds, peak RSS MB, stderr) of one command run to its end (exit 0)."""
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = proc.stderr.read().decode() if proc.stderr else ""
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {err[-800:]}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, err


def run(args: argparse.Namespace, cache: Path) -> None:
    db = store_of(cache, args.requests, args.copies)
    checkouts = [("this checkout", ROOT)]
    for spec in args.checkout:
        label, _, path = spec.partition("=")
        checkouts.append((label, Path(path).resolve()))
    anchor_cpu, anchor_mb, _ = child([sys.executable, "-c", ANCHOR, str(db)], ROOT)
    measure("count spans anchor", anchor_cpu, "CPU s")
    for round_ in range(args.rounds):
        for label, cwd in checkouts:
            work = cache / "judged.duckdb"
            shutil.copyfile(db, work)
            cpu, peak, err = child(
                [sys.executable, "-c", LAUNCH, "evaluate", "--db", str(work), "--no-judge"], cwd
            )
            name = f"evaluate --no-judge, {label}, round {round_ + 1}"
            measure(name, cpu, "CPU s", baseline=anchor_cpu, baseline_name="count spans anchor")
            measure(f"{name}, peak RSS", peak, "MB", baseline=anchor_mb, baseline_name="count spans anchor")
            print(f"{label}, round {round_ + 1}: {err.strip().splitlines()[-1]}")
            work.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=100, help="OTLP requests of 512 spans ingested")
    parser.add_argument("--copies", type=int, default=19, help="copies of them under new trace ids")
    parser.add_argument("--rounds", type=int, default=1, help="runs of each interpreter, alternating")
    parser.add_argument("--checkout", action="append", default=[], help="label=DIR of another checkout")
    parser.add_argument("--cache", type=Path, help="keep the built store here")
    add_options(parser)
    args = parser.parse_args()
    if args.smoke:
        args.requests, args.copies = 2, 1
    with reporting(args), work_dir(args.cache) as where:
        run(args, where)


if __name__ == "__main__":
    main()
