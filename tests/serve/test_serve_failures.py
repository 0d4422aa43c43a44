"""Failures `serve` and the readers beside it must ride out without a traceback or a stall: a full
disk (a real tmpfs filled to the last byte: ENOSPC, see full_disk.py) and clients that reset their
connection mid-request."""

from __future__ import annotations

import json
import socket
import struct
import time
from pathlib import Path

from conftest import cli
from full_disk import fill, small_disk
from receiver import ServeProcess
from test_segments import span_table
from test_serve import request, span, unique_request

from traceladder.store.db import open_store
from traceladder.store.segments import SegmentWriter, pending, segment_root


def count(db: Path, table: str = "spans") -> tuple[int, str]:
    r = cli("sql", "--db", str(db), f"SELECT count(*) FROM {table}", "--csv")
    assert r.returncode == 0, r.stderr
    return int(r.stdout.splitlines()[1]), r.stderr


def acknowledged(disk: Path, scenario: str) -> Path:
    """A segment written aside on the disk while it still has room (see `arrive`)."""
    return SegmentWriter(disk / "arriving").write("spans", span_table(scenario)).path


def arrive(segment: Path, db: Path) -> Path:
    """The segment becomes pending beside the store once the disk is full: as if it had been
    acknowledged just before the disk filled up and not folded yet (a rename needs no space)."""
    target = segment_root(db) / "spans" / segment.name
    segment.rename(target)
    return target


def test_sql_on_a_full_disk_shows_what_is_pending_and_writes_nothing(tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk") as disk:
        db = disk / "s.duckdb"
        SegmentWriter(segment_root(db)).write("spans", span_table())
        open_store(db).close()  # folded
        segment = acknowledged(disk, "openinference/parallel")
        filler = fill(disk)
        waiting = arrive(segment, db)
        assert count(db) == (14, "")  # a reader needs no room: the pending spans are laid over in memory
        assert waiting.exists() and not (segment_root(db) / "damaged").exists()
        filler.unlink()
        open_store(db).close()  # a writer folds it as soon as there is room
        assert not waiting.exists()
        assert count(db) == (14, "")


def _wait_until_folded(serve: ServeProcess) -> None:
    for _ in range(300):  # bounded: 300 × 0.1 s
        if json.loads(serve.get("/healthz").body)["pending_segments"] == 0:
            return
        time.sleep(0.1)
    raise AssertionError("segments were never folded")


def test_serve_on_a_full_disk_answers_503_says_so_once_and_exits_0(tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk") as disk:
        db = disk / "s.duckdb"
        first, second = (
            acknowledged(disk, "otel-genai-openai/parallel"),
            acknowledged(disk, "openinference/parallel"),
        )
        with ServeProcess(db) as serve:
            assert serve.post("/v1/traces", request(span(0), span(1))).status == 200
            _wait_until_folded(serve)
            filler = fill(disk)
            arrive(first, db)
            for n in range(1, 6):  # every request is refused, none acknowledged
                reply = serve.post("/v1/traces", unique_request(n, spans=5))
                assert reply.status == 503 and reply.headers["retry-after"] == "1"
                assert b"No space left on device" in reply.body
            time.sleep(1.5)  # several fold intervals (0.2 s) pass on the full disk
            # a reader beside it still answers, with the segment serve could not fold
            assert count(db) == (2 + 7, "")
            filler.unlink()  # room again: it recovers by itself
            assert serve.post("/v1/traces", unique_request(6, spans=5)).status == 200
            _wait_until_folded(serve)
            filler = fill(disk)  # and full once more when it is told to stop
            arrive(second, db)
            code, err = serve.stop()
        assert code == 0, err
        assert "Traceback" not in err, err
        assert err.count("cannot write segments (No space left on device)") == 1, err
        assert err.count("writing segments again") == 1, err
        assert 1 <= err.count("cannot fold segments") <= 2, err  # once per time the disk was full
        assert err.count("folding segments again") == 1, err
        assert "stopped; segments left for the next command to fold (" in err
        assert not list(segment_root(db).rglob(".tmp-*"))  # nothing half-written left behind
        filler.unlink()
        assert count(db) == (2 + 7 + 5 + 7, "")
        assert len(pending(segment_root(db))) == 1  # a reader folds nothing
        open_store(db).close()
        assert pending(segment_root(db)) == []


def _reset_after(port: int, sent: bytes) -> None:
    """Send `sent`, then close with SO_LINGER 0: the kernel answers with RST, not FIN."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(sent)
    time.sleep(0.2)  # let the receiver start reading the request
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


def test_a_client_resetting_its_connection_mid_request_prints_no_traceback(tmp_path: Path) -> None:
    with ServeProcess(tmp_path / "s.duckdb") as serve:
        body = request(span(0))
        head = f"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\nContent-Length: {len(body)}\r\n"
        _reset_after(serve.port, head.encode()[:40])  # half the headers
        _reset_after(serve.port, head.encode() + b"\r\n" + body[: len(body) // 2])  # half the body
        _reset_after(serve.port, head.encode())  # every header, not the blank line after them
        assert serve.post("/v1/traces", request(span(1))).status == 200  # still serving
        code, err = serve.stop()
    assert code == 0, err
    assert "Traceback" not in err and "Exception occurred" not in err, err
    assert err.count("\n") == 2, err  # "listening on …" and "stopped; …"
