"""`traceladder serve` end to end: a real receiver process on 127.0.0.1, real OTLP/HTTP requests
(the OTel SDK's own exporters, and the real producers' captured bodies), the real store after."""

from __future__ import annotations

import gzip
import json
import os
import signal
import threading
import time
from pathlib import Path

import producers
import pytest
from conftest import cli, rows
from google.rpc import status_pb2
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from receiver import JS, PB, ServeProcess

TID = bytes.fromhex("5b8efff798038103d269b633813fc60c")


def span(i: int, trace: bytes = TID, parent: bytes = b"", name: str = "work") -> Span:
    return Span(trace_id=trace, span_id=(i + 1).to_bytes(8, "big"), parent_span_id=parent, name=name,
                start_time_unix_nano=1_700_000_000_000_000_000 + i, end_time_unix_nano=1_700_000_000_000_000_100 + i)  # fmt: skip


def request(*spans: Span) -> bytes:
    return ExportTraceServiceRequest(
        resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=list(spans))])]
    ).SerializeToString()


def agent_spans(provider: TracerProvider, runs: int) -> None:
    """Agent-shaped spans made by the real SDK: invoke_agent → chat → execute_tool → chat."""
    tracer = provider.get_tracer("test.agent", "1.0")
    for r in range(runs):
        with tracer.start_as_current_span(
            "invoke_agent bot", attributes={"gen_ai.operation.name": "invoke_agent"}
        ):
            with tracer.start_as_current_span("chat m", attributes={"gen_ai.operation.name": "chat"}):
                pass
            with tracer.start_as_current_span(
                "execute_tool lookup",
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "lookup",
                    "gen_ai.tool.call.id": f"call_{r}",
                    "gen_ai.tool.call.arguments": f'{{"n": {r}}}',
                    "gen_ai.tool.call.result": "ok",
                },
            ):
                pass
            with tracer.start_as_current_span("chat m", attributes={"gen_ai.operation.name": "chat"}):
                pass


@pytest.mark.parametrize("compression", [Compression.NoCompression, Compression.Gzip])
def test_the_sdk_exporter_delivers_every_span_and_call(tmp_path: Path, compression: Compression) -> None:
    db = tmp_path / "s.duckdb"
    with ServeProcess(db) as serve:
        provider = TracerProvider(resource=Resource.create({"service.name": "t"}))
        exporter = OTLPSpanExporter(
            endpoint=f"http://127.0.0.1:{serve.port}/v1/traces", compression=compression
        )
        provider.add_span_processor(BatchSpanProcessor(exporter, max_export_batch_size=64))
        agent_spans(provider, 40)
        assert provider.force_flush()
        provider.shutdown()
        code, err = serve.stop()
    assert code == 0, err
    assert rows(
        db, "SELECT count(*), count(DISTINCT trace_id), count(DISTINCT (trace_id, span_id)) FROM spans"
    ) == [(160, 40, 160)]
    calls = rows(db, "SELECT tool_name, call_id, arguments_raw, result FROM tool_calls ORDER BY call_id")
    assert sorted(calls) == sorted(("lookup", f"call_{r}", f'{{"n": {r}}}', "ok") for r in range(40))
    assert rows(db, "SELECT DISTINCT source FROM spans") == [("otlp",)]


def test_real_producer_requests_become_their_tool_calls(tmp_path: Path) -> None:
    """Every captured request of every producer and scenario, protobuf and JSON, through one
    receiver: each trace's calls are the ones the scripted model sent."""
    db = tmp_path / "s.duckdb"
    traces: dict[str, Path] = {}
    with ServeProcess(db, workers=2) as serve:
        for scenario in producers.scenarios():
            for path, body in producers.protobuf_bodies(scenario) + producers.json_bodies(scenario):
                content_type = JS if body[:1] == b"{" else PB
                reply = serve.post(path, body, content_type)
                assert reply.status == 200, (scenario, reply.body)
                assert reply.headers["content-type"] == content_type
                if content_type == PB:
                    assert (
                        ExportTraceServiceResponse.FromString(reply.body).partial_success.rejected_spans == 0
                    )
            traces[producers.trace_id(scenario)] = scenario
        code, err = serve.stop()
    assert code == 0, err
    stored = rows(db, "SELECT trace_id, tool_name, arguments_raw FROM tool_calls ORDER BY trace_id, ordinal")
    assert {t for t, _, _ in stored} == set(traces)
    for trace_id, scenario in traces.items():
        want = [(name, args) for name, _, args, _ in producers.expected_calls(scenario)]
        got = [(name, args) for t, name, args in stored if t == trace_id]
        assert [n for n, _ in got] == [n for n, _ in want], scenario
        for (_, got_args), (_, want_args) in zip(got, want, strict=True):
            assert got_args == want_args or json.loads(got_args) == json.loads(want_args), scenario


TOKEN = "s3cret-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
BOMB = gzip.compress(b"\0" * (200 << 20))  # 200 MiB of zeros in ~200 KB
GOOD = request(span(0), span(1, parent=(1).to_bytes(8, "big")))

# (name, path, body, content type, extra headers, status, message fragment, method)
BAD_INPUTS = [
    (
        "truncated protobuf",
        "/v1/traces",
        GOOD[:-7],
        PB,
        AUTH,
        400,
        "invalid protobuf ExportTraceServiceRequest",
        "POST",
    ),
    (
        "wrong content type",
        "/v1/traces",
        GOOD,
        "text/plain",
        AUTH,
        415,
        "unsupported Content-Type 'text/plain'",
        "POST",
    ),
    ("no content type", "/v1/traces", GOOD, None, AUTH, 415, "unsupported Content-Type 'none'", "POST"),
    ("invalid JSON", "/v1/traces", b'{"resourceSpans": [', JS, AUTH, 400, "invalid JSON", "POST"),
    ("JSON that is not an object", "/v1/traces", b"[1, 2]", JS, AUTH, 400, "must be a JSON object", "POST"),
    (
        "declared body over the limit",
        "/v1/traces",
        b"\0" * (2 << 20),
        PB,
        AUTH,
        413,
        "exceeds the limit of 1048576 bytes",
        "POST",
    ),
    (
        "gzip bomb",
        "/v1/traces",
        BOMB,
        PB,
        {**AUTH, "Content-Encoding": "gzip"},
        413,
        "exceeds the limit",
        "POST",
    ),
    (
        "corrupt gzip",
        "/v1/traces",
        b"\x1f\x8b\x08garbage",
        PB,
        {**AUTH, "Content-Encoding": "gzip"},
        400,
        "not valid gzip",
        "POST",
    ),
    (
        "unknown encoding",
        "/v1/traces",
        GOOD,
        PB,
        {**AUTH, "Content-Encoding": "br"},
        415,
        "unsupported Content-Encoding 'br'",
        "POST",
    ),
    ("unknown signal path", "/v1/metrics", GOOD, PB, AUTH, 404, "no such path /v1/metrics", "POST"),
    ("wrong method", "/v1/traces", b"", PB, AUTH, 405, "/v1/traces takes POST", "GET"),
    ("PUT", "/v1/logs", GOOD, PB, AUTH, 405, "does not take PUT", "PUT"),
    ("missing token", "/v1/traces", GOOD, PB, {}, 401, "missing bearer token", "POST"),
    (
        "wrong token",
        "/v1/traces",
        GOOD,
        PB,
        {"Authorization": "Bearer nope"},
        401,
        "wrong bearer token",
        "POST",
    ),
    (
        "a traces body sent to /v1/logs",
        "/v1/logs",
        b'{"resourceSpans": [{"scopeSpans": [{"spans": [{}]}]}]}',
        JS,
        AUTH,
        200,
        "",
        "POST",
    ),
]


def _message(reply, content_type: str | None) -> str:
    if (content_type or "").startswith(PB):
        return status_pb2.Status.FromString(reply.body).message
    return json.loads(reply.body)["message"]


def test_bad_input_gets_its_status_and_reason_and_loses_nothing(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    other = bytes.fromhex("11111111111111111111111111111111")
    with ServeProcess(db, "--max-body", "1MiB", env={"TRACELADDER_TOKEN": TOKEN}) as serve:
        for name, path, body, content_type, headers, status, fragment, method in BAD_INPUTS:
            t0 = time.monotonic()
            reply = serve.post(path, body, content_type, headers, method=method)
            assert reply.status == status, (name, reply.body)
            assert time.monotonic() - t0 < 10, name  # a bomb or an oversized body is refused, not processed
            if status != 200:
                assert fragment in _message(reply, content_type), name
            if status == 401:
                assert reply.headers["www-authenticate"].startswith("Bearer"), name
            if status == 405:
                assert reply.headers["allow"] == "POST", name
            # the receiver keeps serving, and good requests still land (once, however often re-sent)
            assert serve.get("/healthz").status == 200, name
            assert serve.post("/v1/traces", GOOD, PB, AUTH).status == 200, name

        # spans with bad ids are rejected alone, with partial_success
        body = request(span(10, other), Span(trace_id=other[:15], span_id=b"\x01" * 8, name="short trace id"),
                       Span(trace_id=other, span_id=b"\x02" * 7, name="short span id"), span(11, other))  # fmt: skip
        reply = serve.post("/v1/traces", body, PB, AUTH)
        assert reply.status == 200
        partial = ExportTraceServiceResponse.FromString(reply.body).partial_success
        assert partial.rejected_spans == 2
        assert "trace_id not 16 bytes (got 15)" in partial.error_message
        assert "span_id not 8 bytes (got 7)" in partial.error_message
        as_json = serve.post("/v1/traces", json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [
            {"traceId": "abcd", "spanId": "0102030405060708", "name": "x"}]}]}]}).encode(), JS, AUTH)  # fmt: skip
        assert json.loads(as_json.body)["partialSuccess"]["rejectedSpans"] == "1"
        assert "trace_id not 16 bytes (got 2)" in json.loads(as_json.body)["partialSuccess"]["errorMessage"]
        code, err = serve.stop()
    assert code == 0, err
    # GOOD's two spans, and the two good spans of the partial batch; an orphan (its parent never
    # arrived) is kept as it is. Nothing from a refused body, nothing half-written.
    assert rows(db, "SELECT trace_id, span_id, parent_span_id FROM spans ORDER BY trace_id, span_id") == [
        (other.hex(), "000000000000000b", None),
        (other.hex(), "000000000000000c", None),
        (TID.hex(), "0000000000000001", None),
        (TID.hex(), "0000000000000002", "0000000000000001"),
    ]
    assert not list((tmp_path / "s.duckdb.segments" / "spans").glob("*.parquet"))  # all folded


def test_refuses_a_public_address_without_a_token(tmp_path: Path) -> None:
    r = cli("serve", "--db", str(tmp_path / "s.duckdb"), "--host", "0.0.0.0", "--port", "0")
    assert r.returncode == 2
    assert "refusing to listen on 0.0.0.0 without a token" in r.stderr
    assert r.stderr.count("\n") == 1


def unique_request(n: int, spans: int = 50) -> bytes:
    trace = n.to_bytes(16, "big")
    return request(*(span(i, trace) for i in range(spans)))


def test_a_200_survives_kill_9(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    serve = ServeProcess(db, "--fold-interval", "3600", workers=2)  # nothing folded before the kill
    with serve:
        for n in range(1, 41):
            assert serve.post("/v1/traces", unique_request(n)).status == 200
        os.killpg(serve.proc.pid, signal.SIGKILL)  # the receiver and its workers, no goodbye
        serve.proc.wait()
    r = cli(
        "sql", "--db", str(db), "SELECT count(*), count(DISTINCT (trace_id, span_id)) FROM spans", "--csv"
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[1] == "2000,2000"


def test_sigterm_answers_in_flight_requests_and_keeps_them(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    acknowledged: list[int] = []
    with ServeProcess(db, workers=2) as serve:

        def send(start: int) -> None:
            for n in range(start, start + 1000, 4):
                try:
                    if serve.post("/v1/traces", unique_request(n, 20)).status == 200:
                        acknowledged.append(n)
                except OSError:
                    return  # the receiver has stopped listening

        senders = [threading.Thread(target=send, args=(k + 1,)) for k in range(4)]
        for t in senders:
            t.start()
        time.sleep(1.5)
        code, err = serve.stop(signal.SIGTERM)
        for t in senders:
            t.join()
    assert code == 0, err
    assert acknowledged
    r = cli("sql", "--db", str(db), "SELECT DISTINCT trace_id FROM spans", "--csv")
    stored = {int(line, 16) for line in r.stdout.splitlines()[1:]}
    assert set(acknowledged) <= stored


def test_readers_and_writers_work_while_it_receives(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    sent: list[int] = []
    with ServeProcess(db, workers=2) as serve:
        stop = threading.Event()

        def load() -> None:
            # A request every 20 ms keeps the receiver writing through the commands below (more
            # requests than commands while they run, asserted) without spinning both cores.
            n = 1
            while not stop.is_set():
                assert serve.post("/v1/traces", unique_request(n)).status == 200
                sent.append(n)
                n += 1
                stop.wait(0.02)

        loader = threading.Thread(target=load)
        loader.start()
        try:
            commands = [
                ("sql", "--db", str(db), "SELECT count(*) FROM spans", "--csv"),
                ("run", "--db", str(db), "--case", "fc-d1-001"),
                ("evaluate", "--db", str(db)),
                ("report", "--db", str(db)),
                ("sql", "--db", str(db), "SELECT count(*) FROM tool_calls", "--csv"),
            ]
            while not sent and loader.is_alive():  # the receiver is writing before the first command
                time.sleep(0.01)
            during = [len(sent)]
            for args in commands:
                r = cli(*args)
                assert r.returncode == 0, (args, r.stderr)
                during.append(len(sent))
            assert during[-1] - during[0] > len(commands), f"requests sent, command by command: {during}"
        finally:
            stop.set()
            loader.join()
        code, err = serve.stop()
    assert code == 0, err
    total = len(sent) * 50
    counts = rows(db, "SELECT count(*), count(DISTINCT (trace_id, span_id)) FROM spans WHERE source = 'otlp'")
    assert counts == [(total, total)]
    assert rows(db, "SELECT count(*) FROM runs")[0][0] == 1


def test_a_writer_that_falls_behind_answers_503_with_retry_after(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    statuses: list[tuple[int, int, str | None]] = []
    with ServeProcess(db, "--queue-rows", "1000") as serve:

        def send(k: int) -> None:
            for n in range(k * 1000, k * 1000 + 25):
                reply = serve.post("/v1/traces", unique_request(n, 900))
                statuses.append((n, reply.status, reply.headers.get("retry-after")))

        threads = [threading.Thread(target=send, args=(k,)) for k in range(1, 9)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        serve.stop()
    busy = [s for s in statuses if s[1] == 503]
    assert busy and all(retry == "1" for _, _, retry in busy)
    assert {status for _, status, _ in statuses} == {200, 503}
    accepted = {n for n, status, _ in statuses if status == 200}
    stored = {int(t, 16) for (t,) in rows(db, "SELECT DISTINCT trace_id FROM spans")}
    assert stored == accepted  # every 200 is there, nothing that was refused


def test_an_idle_keep_alive_client_does_not_hold_up_shutdown(tmp_path: Path) -> None:
    import http.client

    with ServeProcess(tmp_path / "s.duckdb", "--read-timeout", "600", workers=2) as serve:
        idle = [http.client.HTTPConnection("127.0.0.1", serve.port, timeout=60) for _ in range(4)]
        for conn in idle:  # each leaves a connection open between requests, as SDK exporters do
            conn.request("POST", "/v1/traces", body=GOOD, headers={"Content-Type": PB})
            assert conn.getresponse().read() == b""
        code, err = serve.stop(timeout=20)  # without closing idle connections: a 600 s wait
        for conn in idle:
            conn.close()
    assert code == 0, err


def test_processes_sharing_the_socket_never_block_in_accept(tmp_path: Path) -> None:
    # Every process's select() wakes for each connection; only one accept() wins. A blocking
    # accept() in the others would sleep until the next connection and never see SIGTERM.
    from concurrent.futures import ThreadPoolExecutor

    with ServeProcess(tmp_path / "s.duckdb", workers=3) as serve:
        with ThreadPoolExecutor(8) as pool:  # bursts: several processes wake for the same connection
            assert set(pool.map(lambda _: serve.get("/healthz").status, range(300))) == {200}
        code, err = serve.stop(timeout=20)
    assert code == 0, err


def test_a_refused_body_still_being_sent_gets_its_answer(tmp_path: Path) -> None:
    # The client is still writing 32 MiB when the 413 goes out: the receiver reads and drops the
    # rest instead of closing on it, so the client sees the 413, not a reset connection.
    with ServeProcess(tmp_path / "s.duckdb", "--max-body", "1MiB") as serve:
        for _ in range(3):
            reply = serve.post("/v1/traces", b"\0" * (32 << 20), PB)
            assert reply.status == 413
        assert serve.post("/v1/traces", GOOD, PB).status == 200
