"""OTLP/HTTP protobuf through `traceladder serve` into the store, against a naive receiver in the
same run.

Workload: agent-shaped spans made by the real OTel SDK (tests/otlp_workload.py: invoke_agent,
chat spans with 1–5 KB of messages and ~2 KB of tool definitions, execute_tool spans; ~3.2 KB of
protobuf per span), encoded 512 spans per request as the SDK's BatchSpanProcessor sends them.

* serve: a real `traceladder serve` subprocess; client threads POST the bodies over keep-alive
  connections. "acknowledged" = every request answered 200, i.e. durable in segments; "folded" =
  the time until the store holds every span and its tool calls (serve folds while receiving).
* naive: what a straightforward receiver does, in-process and without HTTP: json_format
  MessageToDict per request, per-span Python to rows, one DuckDB insert per request (anti-join
  dedupe), tool calls derived by the same code.

    python bench/serve_throughput.py [--requests 120] [--workers N] [--clients 4] [--smoke] [--json]
"""

from __future__ import annotations

import argparse
import base64
import http.client
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import duckdb
import pyarrow as pa
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import otlp_workload  # noqa: E402
from measures import add_options, cpu_seconds, measure, reporting  # noqa: E402 - bench/measures.py

from traceladder.store.db import Store  # noqa: E402
from traceladder.store.spans import SPAN_SCHEMA  # noqa: E402
from traceladder.store.writes import write_batch  # noqa: E402

KINDS = ("UNSPECIFIED", "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER")


def _value(v: dict) -> object:
    if "stringValue" in v:
        return v["stringValue"]
    if "intValue" in v:
        return int(v["intValue"])
    if "doubleValue" in v:
        return v["doubleValue"]
    if "boolValue" in v:
        return v["boolValue"]
    if "arrayValue" in v:
        return [_value(x) for x in v["arrayValue"].get("values", [])]
    if "kvlistValue" in v:
        return {kv["key"]: _value(kv.get("value", {})) for kv in v["kvlistValue"].get("values", [])}
    return None


def b64hex(text: str) -> str:
    return base64.b64decode(text).hex()


def naive(bodies: list[bytes], db: Path) -> float:
    start = time.perf_counter()
    with Store(db) as store:
        for body in bodies:
            d = json_format.MessageToDict(ExportTraceServiceRequest.FromString(body))
            rows = []
            for rs in d.get("resourceSpans", []):
                resource = {
                    kv["key"]: _value(kv["value"]) for kv in rs.get("resource", {}).get("attributes", [])
                }
                for ss in rs.get("scopeSpans", []):
                    for sp in ss.get("spans", []):
                        attrs = {kv["key"]: _value(kv["value"]) for kv in sp.get("attributes", [])}
                        rows.append(
                            {
                                "trace_id": b64hex(sp["traceId"]),
                                "span_id": b64hex(sp["spanId"]),
                                "parent_span_id": b64hex(sp["parentSpanId"])
                                if sp.get("parentSpanId")
                                else None,
                                "name": sp["name"],
                                "kind": sp.get("kind", "SPAN_KIND_UNSPECIFIED").removeprefix("SPAN_KIND_"),
                                "start_ns": int(sp["startTimeUnixNano"]),
                                "end_ns": int(sp["endTimeUnixNano"]),
                                "status_code": sp.get("status", {})
                                .get("code", "STATUS_CODE_UNSET")
                                .removeprefix("STATUS_CODE_"),
                                "status_message": sp.get("status", {}).get("message"),
                                "attributes": json.dumps(attrs),
                                "events": json.dumps(sp.get("events", [])),
                                "links": json.dumps(sp.get("links", [])),
                                "resource": json.dumps(resource),
                                "scope_name": ss.get("scope", {}).get("name"),
                                "scope_version": ss.get("scope", {}).get("version"),
                                "trace_state": None,
                                "flags": int(sp.get("flags", 0)),
                                "source": "naive",
                            }
                        )
            write_batch(store, spans=pa.Table.from_pylist(rows, schema=SPAN_SCHEMA))
    return time.perf_counter() - start


def post_all(port: int, bodies: list[bytes], clients: int) -> list[int]:
    statuses: list[int] = []
    lock = threading.Lock()
    queue = list(enumerate(bodies))

    def worker() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        while True:
            with lock:
                if not queue:
                    break
                _, body = queue.pop()
            while True:
                conn.request(
                    "POST", "/v1/traces", body=body, headers={"Content-Type": "application/x-protobuf"}
                )
                r = conn.getresponse()
                r.read()
                if r.status != 503:
                    break
                time.sleep(float(r.getheader("Retry-After", "1")))
            with lock:
                statuses.append(r.status)
        conn.close()

    threads = [threading.Thread(target=worker) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return statuses


def through_serve(
    bodies: list[bytes], n_spans: int, db: Path, workers: int, clients: int
) -> tuple[float, float, float]:
    """(seconds until acknowledged, until folded, CPU seconds of serve and its workers from start
    to exit)."""
    cpu0 = cpu_seconds()
    log = db.with_suffix(".log")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "traceladder",
            "serve",
            "--db",
            str(db),
            "--port",
            "0",
            "--workers",
            str(workers),
        ],
        cwd=ROOT,
        stderr=log.open("wb"),
        start_new_session=True,
    )
    while not (m := re.search(r":(\d+) ", log.read_text())):
        time.sleep(0.05)
    port = int(m.group(1))
    start = time.perf_counter()
    statuses = post_all(port, bodies, clients)
    acked = time.perf_counter() - start
    assert statuses == [200] * len(bodies), set(statuses)
    # folded: every segment in the store (serve folds while receiving; polling the store itself
    # would hold its lock and keep serve from folding)
    while True:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        conn.request("GET", "/healthz")
        health = json.loads(conn.getresponse().read())
        conn.close()
        if health["pending_segments"] == 0:
            break
        if time.perf_counter() - start > 600:
            raise SystemExit(f"not folded after 600 s: {health}; serve said: {log.read_text()[-2000:]}")
        time.sleep(0.05)
    folded = time.perf_counter() - start
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=120)
    cpu = cpu_seconds() - cpu0  # the client threads ran here too: an upper bound for serve's own
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM spans").fetchone() == (n_spans,)
    con.close()
    return acked, folded, cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=120)
    parser.add_argument("--workers", type=int, default=min(4, os.cpu_count() or 1))
    parser.add_argument("--clients", type=int, default=4)
    add_options(parser)
    args = parser.parse_args()
    if args.smoke:
        args.requests, args.workers, args.clients = 1, 1, 1
    with reporting(args):
        run(args)


def run(args: argparse.Namespace) -> None:
    print("making the workload with the OTel SDK ...", flush=True)
    spans = otlp_workload.make_spans(args.requests * otlp_workload.BATCH, seed=1)
    bodies = otlp_workload.encode_requests(spans)
    n = len(spans)
    size = sum(map(len, bodies))
    print(f"{n} spans in {len(bodies)} requests, {size / n:.0f} B of protobuf per span")
    with tempfile.TemporaryDirectory() as tmp:
        sample = bodies[: max(4, len(bodies) // 10)]
        sample_spans = sum(
            ExportTraceServiceRequest.FromString(b).resource_spans[0].scope_spans[0].spans.__len__()
            for b in sample
        )
        t_naive = naive(sample, Path(tmp) / "naive.duckdb")
        naive_rate = sample_spans / t_naive
        acked, folded, cpu = through_serve(bodies, n, Path(tmp) / "serve.duckdb", args.workers, args.clients)
    print(
        f"naive receiver (MessageToDict + per-span Python + insert), {sample_spans} spans: {naive_rate:,.0f} spans/s"
    )
    print(
        f"serve --workers {args.workers}, {args.clients} clients, acknowledged (durable): {n / acked:,.0f} spans/s  "
        f"(x{n / acked / naive_rate:.1f} naive)"
    )
    print(
        f"serve, folded into the store with tool calls:        {n / folded:,.0f} spans/s  "
        f"(x{n / folded / naive_rate:.1f} naive)"
    )
    measure(f"serve acknowledged, {args.workers} workers", n / acked, "spans/s",
            baseline=naive_rate, baseline_name="naive receiver")  # fmt: skip
    measure(f"serve folded, {args.workers} workers", n / folded, "spans/s",
            baseline=naive_rate, baseline_name="naive receiver")  # fmt: skip
    measure("serve folded, per CPU-second (serve + workers + clients)", n / cpu, "spans/CPU-s")


if __name__ == "__main__":
    main()
