"""Exporter throughput: our DuckDBSpanExporter vs. a plain Arrow insert of the same rows.

Prints spans/s for both and the ratio, measured in one process (machines are noisy; compare the
ratio). The exporter does more than the plain insert: it converts SDK spans to Arrow, ignores
re-sent spans (primary key) and re-derives tool_calls for the traces in each batch.

    python bench/exporter_throughput.py [--spans 120000] [--batch 512] [--smoke] [--json]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from measures import add_options, measure, reporting  # bench/measures.py
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from traceladder.store import DuckDBSpanExporter, Store
from traceladder.store.spans import SPAN_COLUMNS, readable_span_columns, to_arrow
from traceladder.store.writes import write_spans

# The plain insert names its columns: the spans table has more than the Arrow rows (columns a
# migration added), so an insert by position would put values in the wrong columns or fail.
PLAIN_INSERT = f"INSERT INTO plain ({', '.join(SPAN_COLUMNS)}) SELECT {', '.join(SPAN_COLUMNS)} FROM t"


def make_spans(count: int):
    """Agent-shaped traces: 1 invoke_agent, 3 chat, 2 execute_tool spans each (6 spans)."""
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("bench")
    messages = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "退货 W441 " * 20}]}])
    for i in range(count // 6):
        with tracer.start_as_current_span(
            "invoke_agent a",
            attributes={"gen_ai.operation.name": "invoke_agent", "traceladder.case.id": f"c{i}"},
        ):
            for step in range(3):
                with tracer.start_as_current_span(
                    "chat m",
                    attributes={
                        "gen_ai.operation.name": "chat",
                        "gen_ai.input.messages": messages,
                        "gen_ai.usage.input_tokens": 300,
                    },
                ):
                    pass
                if step < 2:
                    attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_order", "gen_ai.tool.call.id": f"call_{step}",
                             "gen_ai.tool.call.arguments": '{"order_id": "W441"}', "gen_ai.tool.call.result": '{"status": "delivered"}'}  # fmt: skip
                    with tracer.start_as_current_span("execute_tool get_order", attributes=attrs):
                        pass
    return memory.get_finished_spans()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--spans", type=int, default=120_000)
    parser.add_argument("--batch", type=int, default=512)
    add_options(parser)
    args = parser.parse_args()
    if args.smoke:
        args.spans, args.batch = 600, 128
    with reporting(args):
        run(args)


def run(args: argparse.Namespace) -> None:
    spans = make_spans(args.spans)
    n = len(spans)
    with tempfile.TemporaryDirectory() as tmp:
        with Store(Path(tmp) / "plain.duckdb") as store:
            table = to_arrow(readable_span_columns(spans, "bench"))
            store.execute("CREATE TABLE plain AS SELECT * FROM spans WHERE false")
            start = time.perf_counter()
            with store.transaction() as conn:
                conn.register("t", table)
                conn.execute(PLAIN_INSERT)
            plain = time.perf_counter() - start
        with Store(Path(tmp) / "plain_converted.duckdb") as store:
            # The same plain insert, but paying for the same span->row conversion, batch by batch.
            store.execute("CREATE TABLE plain AS SELECT * FROM spans WHERE false")
            start = time.perf_counter()
            for i in range(0, n, args.batch):
                batch = to_arrow(readable_span_columns(spans[i : i + args.batch], "bench"))
                with store.transaction() as conn:
                    conn.register("t", batch)
                    conn.execute(PLAIN_INSERT)
                    conn.unregister("t")
            plain_converted = time.perf_counter() - start
        with Store(Path(tmp) / "ours.duckdb") as store:
            exporter = DuckDBSpanExporter(store)
            start = time.perf_counter()
            for i in range(0, n, args.batch):
                exporter.export(spans[i : i + args.batch])
            ours = time.perf_counter() - start
            tool_calls = store.fetchall("SELECT count(*) FROM tool_calls")[0][0]
        with Store(Path(tmp) / "one.duckdb") as store:
            start = time.perf_counter()
            DuckDBSpanExporter(store).export(spans)
            one_batch = time.perf_counter() - start
        start = time.perf_counter()
        converted = to_arrow(readable_span_columns(spans, "bench"))
        convert = time.perf_counter() - start
        with Store(Path(tmp) / "write.duckdb") as store:
            start = time.perf_counter()
            write_spans(store, converted)
            write = time.perf_counter() - start
    print(f"spans={n} batch={args.batch} tool_calls={tool_calls}")
    print(f"plain_arrow_insert_spans_per_s={n / plain:,.0f}")
    print(f"exporter_spans_per_s={n / ours:,.0f}  (batches of {args.batch}, as BatchSpanProcessor sends)")
    print(f"exporter_one_batch_spans_per_s={n / one_batch:,.0f}")
    print(f"exporter_vs_plain_ratio={ours / plain:.2f}x (batched), {one_batch / plain:.2f}x (one batch)")
    print(
        f"plain_insert_incl_same_conversion_spans_per_s={n / plain_converted:,.0f}"
        f" -> exporter is {ours / plain_converted:.2f}x that (same batches)"
    )
    print(f"  of which span->Arrow conversion (Python) {n / convert:,.0f} spans/s")
    print(
        f"  of which store write (dedupe insert + tool_calls derivation) {n / write:,.0f} spans/s"
        f" = {write / plain:.2f}x the plain insert"
    )
    measure(f"exporter, batches of {args.batch}", n / ours, "spans/s",
            baseline=n / plain_converted, baseline_name="plain insert, same conversion")  # fmt: skip


if __name__ == "__main__":
    main()
