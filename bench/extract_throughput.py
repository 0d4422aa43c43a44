"""Extraction cost: `traceladder.extract.conventions.extract_trace` in µs per span, on agent-shaped traces.

* producers — every real capture in tests/fixtures/producers, replicated with fresh span and
  record ids (one trace per copy), per producer, next to the cost of decoding the same spans from
  OTLP protobuf (the ingest step every span already pays; 10-20 µs/span), so the figures read as
  a share of ingest;
* suite — the traces of our own agent loop: the offline suite on sim:faulty, including
  endless-loop faults run to 60 steps for long traces (or `--db` to read an existing store).

    python bench/extract_throughput.py [--copies 300] [--db PATH] [--repeat 5] [--smoke] [--json]
    python bench/extract_throughput.py --against 46f7548 [--copies 100]   # before/after, one run

`--against REF` measures the captures (tests/fixtures/producers and tests/fixtures/frameworks)
with this checkout's extraction and with REF's (a temporary `git worktree`), alternating A B A B
in one run, and prints each side's best µs per span and the ratio (machines are noisy: only the
ratio within one run means anything).
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import duckdb
from measures import add_options, measure, reporting  # bench/measures.py

from traceladder.decode import decode_logs, decode_traces
from traceladder.extract.conventions import LogView, SpanView, extract_trace

ROOT = Path(__file__).resolve().parents[1]
PRODUCERS = ROOT / "tests" / "fixtures" / "producers"
FRAMEWORKS = ROOT / "tests" / "fixtures" / "frameworks"
PROTOBUF = "application/x-protobuf"


def best_of(repeat: int, run: Callable[[], object]) -> float:
    """Best wall time of `repeat` runs. The inputs are built before and frozen out of the garbage
    collector's reach: otherwise collections triggered by the run traverse every input dict
    (300 copies of each capture) and dominate what is measured (x2-3 here)."""
    gc.collect()
    gc.freeze()
    try:
        timings = []
        for _ in range(repeat):
            start = time.perf_counter()
            run()
            timings.append(time.perf_counter() - start)
        return min(timings)
    finally:
        gc.unfreeze()


def views(span_table, log_table) -> tuple[list[SpanView], list[LogView]]:
    spans = [] if span_table is None else [
        SpanView(r["span_id"], r["parent_span_id"], r["name"], r["kind"], r["start_ns"], r["end_ns"],
                 r["status_code"], r["status_message"], json.loads(r["attributes"]), json.loads(r["events"]),
                 r["scope_name"])
        for r in span_table.to_pylist()
    ]  # fmt: skip
    logs = [
        LogView(r["record_id"], r["span_id"], r["time_ns"], r["event_name"], json.loads(r["body"]),
                json.loads(r["attributes"]), r["scope_name"])
        for r in (log_table.to_pylist() if log_table is not None else [])
    ]  # fmt: skip
    return spans, logs


def fresh_copy(spans: list[SpanView], logs: list[LogView], n: int) -> tuple[list[SpanView], list[LogView]]:
    """The same trace with new span and record ids (copy `n`)."""

    def new(span_id: str | None) -> str | None:
        return None if span_id is None else f"{n:06x}{span_id[6:]}"

    return (
        [dataclasses.replace(s, span_id=new(s.span_id), parent_span_id=new(s.parent_span_id)) for s in spans],
        [dataclasses.replace(r, record_id=f"{n}-{r.record_id}", span_id=new(r.span_id)) for r in logs],
    )


def extract_all(traces: list[tuple[list[SpanView], list[LogView]]]) -> None:
    for spans, logs in traces:
        extract_trace(spans, logs)


def decode_all(bodies: list[tuple[bytes, bool]]) -> None:
    for body, is_logs in bodies:
        (decode_logs if is_logs else decode_traces)(body, PROTOBUF)


def batched(bodies: list[tuple[bytes, bool]], copies: int) -> list[tuple[bytes, bool]]:
    """`copies` requests in one body: concatenated protobuf messages merge their repeated fields,
    so this is one request of `copies` times the spans (decode cost per span amortised)."""
    return [(body * copies, is_logs) for body, is_logs in bodies]


def producers(copies: int, repeat: int) -> None:
    """Per producer, then one measure over all of them: extraction µs per span and item, next to
    decoding the same items from OTLP protobuf."""
    print(f"producers: every capture x{copies} with fresh ids, best of {repeat}")
    total_extract = total_decode = 0.0
    total_spans = total_items = 0
    print(
        f"  {'producer':28} {'spans':>6} {'records':>7} {'extract µs/span':>16} {'µs/item':>8} {'decode µs/item':>15}"
    )
    for producer in sorted(p.name for p in PRODUCERS.iterdir() if p.is_dir()):
        traces: list[tuple[list[SpanView], list[LogView]]] = []
        bodies: list[tuple[bytes, bool]] = []
        n_spans = n_logs = 0
        for scenario in sorted((PRODUCERS / producer).iterdir()):
            spans: list[SpanView] = []
            logs: list[LogView] = []
            for path in sorted(scenario.glob("*-*.pb")):
                is_logs = path.name.startswith("logs")
                bodies.append((path.read_bytes(), is_logs))
                if is_logs:
                    logs += views(None, decode_logs(bodies[-1][0], PROTOBUF).table)[1]
                else:
                    spans += views(decode_traces(bodies[-1][0], PROTOBUF).table, None)[0]
            traces += [fresh_copy(spans, logs, i) for i in range(copies)]
            n_spans, n_logs = n_spans + len(spans), n_logs + len(logs)
        extract = best_of(repeat, partial(extract_all, traces)) / copies
        decode = best_of(repeat, partial(decode_all, batched(bodies, copies))) / copies
        items = n_spans + n_logs
        total_extract, total_decode = total_extract + extract, total_decode + decode
        total_spans, total_items = total_spans + n_spans, total_items + items
        print(
            f"  {producer:28} {n_spans:>6} {n_logs:>7} {extract / n_spans * 1e6:>16.1f} "
            f"{extract / items * 1e6:>8.1f} {decode / items * 1e6:>15.1f}"
        )
    measure("extract, every producer capture", total_extract / total_items * 1e6, "µs/item",
            baseline=total_decode / total_items * 1e6, baseline_name="OTLP protobuf decode")  # fmt: skip


RUNS = (  # (seed, repeat, max steps): the default suite, and endless-loop faults run long
    ("0", "2", "8"),
    ("4", "2", "8"),
    ("4", "3", "60"),
)


SMOKE_RUNS = (("0", "1", "8"),)  # --smoke: one case, once
SMOKE_CASE = ("--case", "fc-d4-001")


def suite_traces(db: Path | None, smoke: bool = False) -> dict[str, list[SpanView]]:
    with tempfile.TemporaryDirectory() as tmp:
        if db is None:
            db = Path(tmp) / "suite.duckdb"
            for seed, repeat, steps in SMOKE_RUNS if smoke else RUNS:
                subprocess.run(
                    [sys.executable, "-m", "traceladder", "run", "--db", str(db), "--model", "sim:faulty",
                     "--seed", seed, "--repeat", repeat, "--max-steps", steps, "--no-report",
                     *(SMOKE_CASE if smoke else ())],
                    check=True, capture_output=True, cwd=ROOT,
                )  # fmt: skip
        with duckdb.connect(str(db), read_only=True) as conn:
            rows = conn.sql(
                "SELECT trace_id, span_id, parent_span_id, name, kind, start_ns, end_ns, status_code, "
                "status_message, attributes, events, scope_name FROM spans"
            ).fetchall()
    traces: dict[str, list[SpanView]] = {}
    for r in rows:
        traces.setdefault(r[0], []).append(SpanView(*r[1:9], json.loads(r[9]), json.loads(r[10]), r[11]))
    return traces


def extract_each(traces: list[list[SpanView]]) -> None:
    for spans in traces:
        extract_trace(spans)


def suite(db: Path | None, repeat: int, smoke: bool = False) -> None:
    traces = list(suite_traces(db, smoke).values())
    print(f"suite: our agent loop on sim:faulty, best of {repeat}")
    print(f"  {'traces':24} {'count':>6} {'spans':>7} {'extract µs/span':>16} {'µs/trace':>9}")
    for label, group in (
        ("all", traces),
        ("long (> 40 spans)", [t for t in traces if len(t) > 40]),
    ):
        if not group:
            continue
        n = sum(map(len, group))
        extract = best_of(repeat, partial(extract_each, group))
        print(
            f"  {label:24} {len(group):>6} {n:>7} {extract / n * 1e6:>16.1f} {extract / len(group) * 1e6:>9.0f}"
        )
        if label == "all":
            measure("extract, our suite's traces", extract / n * 1e6, "µs/span")


def capture_traces(copies: int) -> dict[str, tuple[list[tuple[list[SpanView], list[LogView]]], int]]:
    """Every capture (plain clients and frameworks) from its Collector JSON lines, `copies` times
    with fresh ids: producer → (traces, spans)."""
    out: dict[str, tuple[list[tuple[list[SpanView], list[LogView]]], int]] = {}
    for root in (PRODUCERS, FRAMEWORKS):
        for scenario in sorted(root.glob("*/*")):
            spans: list[SpanView] = []
            logs: list[LogView] = []
            for signal in ("traces", "logs"):
                path = scenario / f"collector-{signal}.jsonl"
                for line in path.read_text().splitlines() if path.exists() else []:
                    if signal == "traces":
                        spans += views(decode_traces(line.encode(), "application/json").table, None)[0]
                    else:
                        logs += views(None, decode_logs(line.encode(), "application/json").table)[1]
            traces, n = out.get(scenario.parent.name, ([], 0))
            traces += [fresh_copy(spans, logs, i) for i in range(copies)]
            out[scenario.parent.name] = (traces, n + len(spans) * copies)
    return out


def emit(copies: int, repeat: int) -> None:
    """One side of `--against`: µs per span per producer, as JSON on stdout."""
    import traceladder

    found = capture_traces(copies)
    timings = {
        name: best_of(repeat, partial(extract_all, traces)) / n * 1e6 for name, (traces, n) in found.items()
    }
    print(json.dumps({"module": traceladder.__file__, "us_per_span": timings}))


def against(ref: str, copies: int, repeat: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "ref"
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), ref], cwd=ROOT, check=True,
                       capture_output=True)  # fmt: skip
        try:
            sides: dict[str, list[dict[str, float]]] = {"this": [], ref: []}
            for _ in range(2):
                for label, path in (("this", ROOT), (ref, tree)):
                    out = subprocess.run(
                        [sys.executable, __file__, "--emit", "--copies", str(copies), "--repeat", str(repeat)],
                        env={**__import__("os").environ, "PYTHONPATH": str(path)}, cwd=path,
                        check=True, capture_output=True, text=True,
                    ).stdout  # fmt: skip
                    result = json.loads(out)
                    assert result["module"].startswith(str(path)), result["module"]
                    sides[label].append(result["us_per_span"])
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=False)
    print(f"extraction before/after in one run: this checkout vs {ref}, best µs/span of 2 alternating runs")
    print(f"  {'producer':30} {ref[:12]:>12} {'this':>8} {'ratio':>7}")
    total_old = total_new = 0.0
    for name in sorted(sides["this"][0]):
        old = (
            min(s[name] for s in sides[ref] if name in s)
            if any(name in s for s in sides[ref])
            else float("nan")
        )
        new = min(s[name] for s in sides["this"])
        total_old, total_new = total_old + old, total_new + new
        print(f"  {name:30} {old:>12.1f} {new:>8.1f} {new / old:>7.2f}")
    print(f"  {'sum':30} {total_old:>12.1f} {total_new:>8.1f} {total_new / total_old:>7.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--copies", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--db", type=Path, help="read our traces from this store instead of running the suite"
    )
    parser.add_argument("--against", metavar="REF", help="compare with another commit's extraction")
    parser.add_argument("--emit", action="store_true", help=argparse.SUPPRESS)
    add_options(parser)
    args = parser.parse_args()
    if args.smoke:
        args.copies, args.repeat = 1, 1
    with reporting(args):
        run(args)


def run(args: argparse.Namespace) -> None:
    if args.emit:
        emit(args.copies, args.repeat)
        return
    if args.against:
        against(args.against, args.copies, args.repeat)
        return
    producers(args.copies, args.repeat)
    suite(args.db, args.repeat, args.smoke)


if __name__ == "__main__":
    main()
