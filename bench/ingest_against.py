"""`bench/ingest_throughput.py --against REF`: REF's `ingest` and serve's fold, measured in child
processes of a temporary `git worktree` of REF exactly as this tree's are, so "faster than today"
is a ratio taken in one run. Not a script of its own (no `__main__`): `ingest_throughput.py` calls
`against` and `folds_against` and reports their figures beside its own."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pyarrow as pa
from cli_startup import checkout, side  # bench/cli_startup.py

from traceladder.decode.bodies import decode_traces
from traceladder.store.segments import SegmentWriter

ROOT = Path(__file__).resolve().parents[1]

_CHILD = """
import gc, resource, sys
from traceladder.receive.ingest.run import ingest
from traceladder.store.db import Store
def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
with Store(sys.argv[1] + ".warm") as store:  # imported and warmed as the bench's own process is
    ingest(store, [sys.argv[3]])
with Store(sys.argv[1]) as store:
    gc.freeze()
    start = cpu()
    summary = ingest(store, [sys.argv[2]])
    used = cpu() - start
print(summary.new_spans, used)
"""


def against(ref: str, path: Path, tmp: Path) -> float:
    """REF's ingest of `path`: CPU µs per span of that one call in a child process, measured as
    ours is — after a first ingest of one request, so the modules the write imports on first use
    and the stage's caches are ready in both, and with what was alive before the call frozen out
    of the collector's scans in both (measured cold, the child read the same code 1.1× slower
    than ours at 100 requests and 2× at 20)."""
    warm = tmp / "warm.jsonl"
    with path.open("rb") as lines:
        warm.write_bytes(lines.readline())
    with checkout(ref) as tree:
        cwd, env = side(tree, tmp / "pycache-ref")
        out = subprocess.run([sys.executable, "-c", _CHILD, str(tmp / "ref.duckdb"), str(path), str(warm)], cwd=cwd,
                             env=env, capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]  # fmt: skip
    spans, cpu = out.split()
    return float(cpu) / int(spans) * 1e6


_FOLD_CHILD = """
import gc, resource, shutil, sys
from pathlib import Path
import pyarrow as pa
from traceladder.extract import STAGE
from traceladder.store.db import Store
from traceladder.store.derived import STORED_SPAN_COLUMNS, Batch, TraceRows
from traceladder.store.fold import fold_pending, read_segment
from traceladder.store.segments import pending, segment_root
def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
def fold(source, db):
    shutil.copytree(source, segment_root(db) / "spans")
    rows = pa.concat_tables([read_segment(s) for s in pending(segment_root(db))])
    with Store(db) as store:
        gc.collect()
        gc.freeze()
        start = cpu()
        result = fold_pending(store)
        store.execute("CHECKPOINT")
        used = cpu() - start
        gc.unfreeze()
    assert result.spans == rows.num_rows, result
    return rows, used
work = Path(sys.argv[1])
fold(sys.argv[3], work / "warm.duckdb")  # imported and warmed: the write's first-use imports, the caches
rows, used = fold(sys.argv[2], work / "fold.duckdb")
empty = TraceRows(rows.schema.empty_table().select(list(STORED_SPAN_COLUMNS)), None)
gc.collect()
gc.freeze()
start = cpu()
STAGE.extract(Batch(rows, None, empty, None), "")
stage = cpu() - start
print(rows.num_rows, used, stage)
"""


class ChildFold(NamedTuple):
    side: str  # "this" or the REF measured against
    us: float  # CPU µs per span: `fold_pending` and the checkpoint
    stage_us: float  # the extraction stage alone over the same rows


def folds_against(ref: str, lines: list[bytes], tmp: Path, rounds: int = 4) -> list[ChildFold]:
    """Serve's fold measured the same way for this tree and for REF, in child processes taking
    turns (this, REF, REF, this, …: the box's load moves, and neither side always goes first, after
    the other's writes to disk): each copies the same receiver segments
    (written once, here) beside a new store, folds one request first to warm up, then folds the
    rest with what was alive frozen out of the collector's scans, then runs the stage alone over
    the same rows. The in-process fold above is measured after this bench's other work; these
    two sides are measured alike, so their ratio is the before → after."""
    source, warm = tmp / "fold-segments", tmp / "fold-warm"
    for where, chunk in ((source, lines), (warm, lines[:1])):
        writer = SegmentWriter(where)
        for line in chunk:
            table = decode_traces(line, "application/json").table
            writer.write(
                "spans", table.append_column("source", pa.array(["otlp"] * table.num_rows, pa.string()))
            )
    out = []
    with checkout(ref) as tree:
        sides = {"this": side(ROOT, tmp / "pycache-this"), ref: side(tree, tmp / "pycache-ref")}
        for i in range(rounds):
            turn = list(sides.items())
            for name, (cwd, env) in turn if i % 2 == 0 else turn[::-1]:  # ABBA: no side always first
                work = tmp / f"fold-child-{i}-{name.replace('/', '_')}"
                work.mkdir()
                done = subprocess.run([sys.executable, "-c", _FOLD_CHILD, str(work), str(source / "spans"),
                                       str(warm / "spans")], cwd=cwd, env=env, capture_output=True, text=True,
                                      check=True).stdout.strip().splitlines()[-1]  # fmt: skip
                spans, fold, stage = done.split()
                out.append(ChildFold(name, float(fold) / int(spans) * 1e6, float(stage) / int(spans) * 1e6))
                shutil.rmtree(work)
    return out
