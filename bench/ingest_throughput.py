"""`traceladder ingest` of OTLP/JSON (Collector JSON lines) into the store, against a naive
ingester in the same run.

Workload: the agent-shaped spans of tests/otlp_workload.py (real OTel SDK, ~3.2 KB of protobuf per
span), 512 per request, written as OTLP/JSON lines the way the Collector's file exporter does.

* ingest: the real code path (`traceladder.receive.ingest.run.ingest`): the one OTLP/JSON decoder
  (`decode.bodies`, the receiver's), rows written in bulk, the extraction stage deriving the calls.
  Also shown: the decode step alone.
* naive: json_format.Parse per request (ids fixed from hex first), per-span Python to rows, one
  insert per request; tool calls derived by the same code.

    python bench/ingest_throughput.py [--requests 200] [--smoke] [--json] [--against main]

Also in the same run: the OTLP/JSON decoder (orjson and a strict walk, falling back to its exact
path) beside its exact path alone (`json_format`), in CPU µs per span; with `--against REF`, REF's `ingest` of the same
file in a child process (a temporary `git worktree`), so "faster than today" is a ratio measured
beside ours, in CPU per span, against the store's write floor (the decoded rows inserted as they
are, one transaction a batch: what storing every span costs before anything is derived).

With `--against REF`, serve's fold is also measured for this tree and for REF alike: the same receiver
segments folded by each in child processes taking turns (this, REF, REF, this), each warmed by one
request first, with the stage alone beside it; their means are the fold's before → after.

The store anchor derives its calls in SQL from `execute_tool` spans alone, so it is compared with
ingest's executed calls (0 must differ); the calls ingest reads from a chat span's output whose
execution the workload cut off (the last call of some traces: status `unknown`, no result) are
printed apart — the anchor's cruder derivation, not a difference of ours.

Also measured: the store's size on disk per million tool calls once ingested (these spans carry
whole chat histories and tool definitions, as instrumented agents record them), for sizing.
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import pyarrow as pa

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import otlp_workload  # noqa: E402
from ingest_against import ChildFold, against, folds_against  # noqa: E402 - bench/ingest_against.py
from measures import add_options, cpu_seconds, measure, reporting  # noqa: E402 - bench/measures.py

from traceladder.decode.bodies import decode_traces  # noqa: E402
from traceladder.decode.otlp_json import trace_request  # noqa: E402
from traceladder.decode.protobuf import decode_trace_request  # noqa: E402
from traceladder.extract import STAGE  # noqa: E402
from traceladder.receive.ingest.run import ingest  # noqa: E402
from traceladder.store.db import Store  # noqa: E402
from traceladder.store.derived import STORED_SPAN_COLUMNS, Batch, TraceRows  # noqa: E402
from traceladder.store.fold import fold_pending, read_segment  # noqa: E402
from traceladder.store.segments import SegmentWriter, pending, segment_root  # noqa: E402
from traceladder.store.spans import SPAN_COLUMNS  # noqa: E402
from traceladder.store.writes import write_batch  # noqa: E402


def naive(lines: list[bytes], db: Path) -> float:
    """The exact path request by request: json_format (pure Python) + per-request insert."""
    start = time.perf_counter()
    with Store(db) as store:
        for line in lines:
            table = decode_traces(line, "application/json").table
            table = table.append_column("source", pa.array(["naive"] * table.num_rows, pa.string()))
            write_batch(store, spans=table)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=200)
    add_options(parser)
    parser.add_argument("--processes", type=int, default=1, help="decode processes (ingest --processes)")
    parser.add_argument(
        "--against", metavar="REF", help="also measure REF's ingest of the same file, in this run"
    )
    args = parser.parse_args()
    if args.smoke:
        args.requests = 1
    with reporting(args):
        run(args)


def run(args: argparse.Namespace) -> None:
    print("making the workload with the OTel SDK ...", flush=True)
    spans = otlp_workload.make_spans(args.requests * otlp_workload.BATCH, seed=2)
    lines = [otlp_workload.to_otlp_json(b) for b in otlp_workload.encode_requests(spans)]
    n = len(spans)
    del spans  # the SDK's span objects: a million objects the collector would scan during the runs
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "traces.jsonl"
        path.write_bytes(b"\n".join(lines) + b"\n")
        print(f"{n} spans in {len(lines)} requests, {path.stat().st_size / n:.0f} B of OTLP/JSON per span")

        sample = lines[: max(2, len(lines) // 20)]
        sample_spans = sum(decode_traces(s, "application/json").table.num_rows for s in sample)
        naive_rate = sample_spans / naive(sample, Path(tmp) / "naive.duckdb")

        start = time.perf_counter()
        tables = _decoded_groups(lines)
        decoded = sum(t.num_rows for t in tables)
        decode_rate = decoded / (time.perf_counter() - start)

        # The write floor: the same decoded rows inserted as they are (one Arrow insert and one
        # commit per group of 20 requests, what ingest commits at a time), no tool calls derived.
        with Store(Path(tmp) / "floor.duckdb") as floor:
            start = time.perf_counter()
            for table in tables:
                rows = table.append_column("source", pa.array(["file"] * table.num_rows, pa.string()))
                with floor.transaction() as conn:
                    conn.register("decoded", rows.select(list(SPAN_COLUMNS)))
                    conn.execute(f"INSERT INTO spans ({', '.join(SPAN_COLUMNS)}) SELECT * FROM decoded")
                    conn.unregister("decoded")
            write_rate = decoded / (time.perf_counter() - start)

        anchor = store_anchor(lines, Path(tmp) / "anchor.duckdb")
        fold = serve_fold(lines, Path(tmp) / "fold.duckdb")

        with Store(Path(tmp) / "ingest.duckdb") as store:
            gc.freeze()  # what is alive before the call (the workload, the tables) is not ingest's to scan
            start, cpu0 = time.perf_counter(), cpu_seconds()
            summary = ingest(store, [str(path)], processes=args.processes)
            elapsed, cpu = time.perf_counter() - start, cpu_seconds() - cpu0
            assert summary.new_spans == n and not summary.problems, summary
            calls = store.fetchall("SELECT count(*) FROM tool_calls")[0][0]
            store.execute("CHECKPOINT")
            size_mb = store.path.stat().st_size / 1e6
            differ = differing_calls(store, Path(tmp) / "anchor.duckdb")
        decoders = _decoders(lines)
        today = against(args.against, path, Path(tmp)) if args.against else None
        folds = folds_against(args.against, lines, Path(tmp)) if args.against else None
    print(f"naive (json_format + per-request insert), {sample_spans} spans: {naive_rate:,.0f} spans/s")
    print(
        f"decode only, the OTLP/JSON decoder:       {decode_rate:,.0f} spans/s  (x{decode_rate / naive_rate:.1f} naive)"
    )
    print(f"store write floor (decoded rows inserted, no derivation): {write_rate:,.0f} spans/s")
    print(
        f"ingest ({args.processes} decode process(es)), {calls} tool calls: {n / elapsed:,.0f} spans/s  (x{n / elapsed / naive_rate:.1f} naive)"
    )
    print(f"store_mb={size_mb:.1f} for {n} spans, {calls} tool calls")
    measure(
        "ingest, Collector JSON lines", n / elapsed, "spans/s", baseline=naive_rate, baseline_name="naive"
    )
    measure("ingest, per CPU-second", n / cpu, "spans/CPU-s")
    measure("decode only", decode_rate, "spans/s", baseline=naive_rate, baseline_name="naive")
    measure("store write floor: decoded rows inserted, no derivation", write_rate, "spans/s")
    measure("store on disk: agent spans, chat histories", size_mb / calls * 1e6, "MB per million calls")
    ours_us = cpu / n * 1e6
    floor_us = 1e6 / write_rate
    print(
        f"ingest CPU per span: {ours_us:.0f} us; store write floor {floor_us:.0f} us ({ours_us / floor_us:.2f}x the floor)"
    )
    print(f"store: {size_mb / n * 1e6 / 1e3:.2f} GB per million spans")
    measure("ingest CPU per span, as a multiple of the store write floor", ours_us / floor_us, "x floor")
    measure("store on disk per million spans", size_mb / n * 1e6 / 1e3, "GB per million spans")
    print(
        f"store anchor (decode {anchor.decode_us:.0f} + one transaction writing every span and deriving "
        f"{anchor.calls} calls, checkpointed, {anchor.write_us:.0f}): {anchor.total_us:.0f} CPU us per span; "
        f"{differ.differ} executed calls differ from ingest's; ingest also reads {differ.requested_only} calls "
        "requested and never executed (cut off by the workload; the anchor's SQL reads execute_tool spans only)"
    )
    print(f"ingest: {ours_us:.0f} CPU us per span = {ours_us / anchor.total_us:.2f}x the store anchor")
    fold_us = fold.us
    print(
        f"serve's fold (segments -> store, checkpointed), {fold.calls} calls: {fold_us:.0f} CPU us per span"
        f" = {fold_us / anchor.write_us:.2f}x the anchor's write ({anchor.write_us:.0f}, no decode); of it the"
        f" extraction stage alone {fold.stage_us:.0f}, the rest (segments read, spans and derived rows stored,"
        f" commit, checkpoint) {fold_us - fold.stage_us:.0f} = {(fold_us - fold.stage_us) / anchor.write_us:.2f}x"
        " the anchor's write"
    )
    measure("store anchor: decode, one transaction storing every span and deriving the calls, checkpoint",
            anchor.total_us, "CPU us/span")  # fmt: skip
    measure("ingest end to end, CPU per span", ours_us, "CPU us/span",
            baseline=anchor.total_us, baseline_name="store anchor")  # fmt: skip
    measure("serve's fold (segments into the store), CPU per span", fold_us, "CPU us/span",
            baseline=anchor.write_us, baseline_name="store anchor's write, no decode")  # fmt: skip
    measure("serve's fold: the extraction stage alone, CPU per span", fold.stage_us, "CPU us/span")
    measure("serve's fold less its extraction stage, CPU per span", fold_us - fold.stage_us, "CPU us/span",
            baseline=anchor.write_us, baseline_name="store anchor's write, no decode")  # fmt: skip
    measure("executed calls differing between ingest and the store anchor", differ.differ, "calls")
    measure("calls ingest reads that the store anchor cannot: requested, never executed", differ.requested_only,
            "calls")  # fmt: skip
    for name, us in decoders.items():
        print(f"decoder {name}: {us:.0f} CPU us per span")
        measure(f"OTLP/JSON decode, {name}", us, "CPU us/span")
    if today is not None:
        print(
            f"{args.against} ingest CPU per span: {today:.0f} us -> this: {ours_us:.0f} us ({today / ours_us:.2f}x faster)"
        )
        measure(f"ingest CPU per span vs {args.against}", today / ours_us, "x faster")
    if folds is not None:
        _report_folds(args.against, folds, anchor.write_us)


class Anchor(NamedTuple):
    decode_us: float  # CPU µs per span: the OTLP/JSON decoder over every request
    write_us: float  # the one transaction (every span, the calls derived in SQL) and the checkpoint
    calls: int

    @property
    def total_us(self) -> float:
        return self.decode_us + self.write_us


# The store anchor's calls: one row per execute_tool span, read in SQL straight from its attributes
# (this workload's calls are all execute_tool spans; the row is compared with ingest's below).
_ANCHOR_CALLS = """
INSERT INTO tool_calls (trace_id, span_id, ordinal, tool_name, call_id, arguments_raw, arguments, result,
                        status, error_type, convention, origin, start_ns, end_ns)
SELECT trace_id, span_id, row_number() OVER (PARTITION BY trace_id ORDER BY start_ns, span_id),
       attributes->>'$."gen_ai.tool.name"', attributes->>'$."gen_ai.tool.call.id"',
       attributes->>'$."gen_ai.tool.call.arguments"',
       try_cast(attributes->>'$."gen_ai.tool.call.arguments"' AS JSON),
       attributes->>'$."gen_ai.tool.call.result"',
       CASE WHEN status_code = 'ERROR' THEN 'error' ELSE 'ok' END,
       attributes->>'$."error.type"', 'otel_genai', 'tool_span', start_ns, end_ns
FROM spans WHERE attributes->>'$."gen_ai.operation.name"' = 'execute_tool'
"""


def store_anchor(lines: list[bytes], db: Path) -> Anchor:
    """The issue's store anchor: every request decoded by the OTLP/JSON decoder, then one DuckDB
    transaction that writes every span (attributes as JSON) and derives the calls in SQL, then one
    checkpoint. What storing and deriving cost with nothing else: ingest's floor."""
    cpu0 = cpu_seconds()
    tables = _decoded_groups(lines)
    decode = cpu_seconds() - cpu0
    spans = pa.concat_tables(tables)
    spans = spans.append_column("source", pa.array(["file"] * spans.num_rows, pa.string()))
    with Store(db) as store:
        cpu0 = cpu_seconds()
        with store.transaction() as conn:
            conn.register("decoded", spans.select(list(SPAN_COLUMNS)))
            conn.execute(f"INSERT INTO spans ({', '.join(SPAN_COLUMNS)}) SELECT * FROM decoded")
            conn.unregister("decoded")
            conn.execute(_ANCHOR_CALLS)
        store.execute("CHECKPOINT")
        write = cpu_seconds() - cpu0
        calls = store.fetchall("SELECT count(*) FROM tool_calls")[0][0]
    n = spans.num_rows
    return Anchor(decode / n * 1e6, write / n * 1e6, calls)


class Fold(NamedTuple):
    us: float  # CPU µs per span: `fold_pending` and the checkpoint
    stage_us: float  # of the same spans: the extraction stage alone, on the segments' rows
    calls: int


def serve_fold(lines: list[bytes], db: Path) -> Fold:
    """Serve's fold: the requests as the receiver leaves them (one durable segment each), folded
    into a new store by `fold_pending` (what serve's fold loop and every command opening the store
    run), then checkpointed. Beside it, the extraction stage alone over the same rows (the
    segments read back, nothing stored yet), so the fold's figure splits into the stage and the
    rest — reading the segments and the store's side, which the anchor's write is the floor of."""
    writer = SegmentWriter(segment_root(db))
    n = 0
    for line in lines:
        table = decode_traces(line, "application/json").table
        writer.write("spans", table.append_column("source", pa.array(["otlp"] * table.num_rows, pa.string())))
        n += table.num_rows
    segments = pending(segment_root(db))
    rows = pa.concat_tables([read_segment(s) for s in segments])
    with Store(db) as store:
        cpu0 = cpu_seconds()
        result = fold_pending(store)
        store.execute("CHECKPOINT")
        cpu = cpu_seconds() - cpu0
        calls = store.fetchall("SELECT count(*) FROM tool_calls")[0][0]
    # after the fold, so the fold's figure is not helped by caches the stage alone warmed
    empty = TraceRows(rows.schema.empty_table().select(list(STORED_SPAN_COLUMNS)), None)
    cpu0 = cpu_seconds()
    STAGE.extract(Batch(rows, None, empty, None), "")
    stage = cpu_seconds() - cpu0
    assert result.spans == n, result
    return Fold(cpu / n * 1e6, stage / rows.num_rows * 1e6, calls)


class CallDifferences(NamedTuple):
    differ: int  # executed calls (an execute_tool span's) in one store and not the other: must be 0
    requested_only: int  # ingest's calls the model requested and no tool span executed


def differing_calls(ours: Store, anchor: Path) -> CallDifferences:
    """Ingest's calls against the anchor's, on what both derive for this workload. The anchor's
    SQL reads `execute_tool` spans only; ingest also reads the calls a chat span's output
    requested, so a call the workload cut off before its execution (the last of its trace) is
    ingest's alone, as it should be: counted apart, never as a difference."""
    cols = "trace_id, span_id, ordinal, tool_name, call_id, arguments_raw, result, status, error_type, start_ns, end_ns"
    executed = (
        "(SELECT trace_id, span_id FROM anchor.spans"
        " WHERE attributes->>'$.\"gen_ai.operation.name\"' = 'execute_tool')"
    )
    ours.execute(f"ATTACH '{anchor}' AS anchor (READ_ONLY)")
    try:
        mine = f"(SELECT {cols} FROM tool_calls SEMI JOIN {executed} USING (trace_id, span_id))"
        differ = ours.fetchall(
            f"SELECT count(*) FROM ((SELECT * FROM {mine} EXCEPT SELECT {cols} FROM anchor.tool_calls)"
            f" UNION ALL (SELECT {cols} FROM anchor.tool_calls EXCEPT SELECT * FROM {mine}))"
        )[0][0]
        requested = ours.fetchall(
            f"SELECT count(*) FROM tool_calls ANTI JOIN {executed} USING (trace_id, span_id)"
        )
        return CallDifferences(differ, requested[0][0])
    finally:
        ours.execute("DETACH anchor")


def _decoded_groups(lines: list[bytes]) -> list[pa.Table]:
    """Every request decoded, in tables of 20 requests (what ingest writes at a time)."""
    return [
        pa.concat_tables([decode_traces(line, "application/json").table for line in lines[i : i + 20]])
        for i in range(0, len(lines), 20)
    ]


def _decoders(lines: list[bytes]) -> dict[str, float]:
    """CPU µs per span of each OTLP/JSON decoder on the same requests."""
    sample = lines[: max(2, len(lines) // 4)]
    out = {}
    cpu0 = cpu_seconds()
    n = sum(decode_trace_request(*trace_request(s)).table.num_rows for s in sample)
    out["json_format (the exact path alone)"] = (cpu_seconds() - cpu0) / n * 1e6
    cpu0 = cpu_seconds()
    n = sum(decode_traces(s, "application/json").table.num_rows for s in sample)
    out["the one decoder (orjson + walk; serve and ingest)"] = (cpu_seconds() - cpu0) / n * 1e6
    return out


def _report_folds(ref: str, folds: list[ChildFold], anchor_write_us: float) -> None:
    """Each side's fold and stage, each turn, then the means as before → after."""
    for f in folds:
        print(
            f"fold child ({f.side}): {f.us:.1f} CPU us per span = {f.us / anchor_write_us:.2f}x the anchor's write;"
            f" stage alone {f.stage_us:.1f}, the rest {f.us - f.stage_us:.1f}"
        )

    def mean(name: str, field: str) -> float:
        values = [getattr(f, field) for f in folds if f.side == name]
        return sum(values) / len(values)

    this, then = mean("this", "us"), mean(ref, "us")
    this_stage, then_stage = mean("this", "stage_us"), mean(ref, "stage_us")
    print(
        f"{ref} -> this, serve's fold measured alike: {then:.1f} -> {this:.1f} CPU us per span"
        f" ({then / this:.2f}x); stage {then_stage:.1f} -> {this_stage:.1f} ({then_stage / this_stage:.2f}x);"
        f" rest {then - then_stage:.1f} -> {this - this_stage:.1f}"
    )
    measure(f"serve's fold vs {ref}, measured alike in child processes", then / this, "x faster")
    measure(f"serve's fold: the extraction stage vs {ref}", then_stage / this_stage, "x faster")
    measure("serve's fold in a child, CPU per span", this, "CPU us/span",
            baseline=anchor_write_us, baseline_name="store anchor's write, no decode")  # fmt: skip


if __name__ == "__main__":
    main()
