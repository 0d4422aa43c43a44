"""`serve` never stalls and never lingers: workers die with their parent at any moment of start-up
(a kill -9 that orphaned one left the port taken), and a flood of trickling connections
(slowloris) can neither keep /healthz and OTLP from answering nor hold up a SIGTERM.

Real processes and sockets on 127.0.0.1; the attacker is a bounded loop in this process.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import random
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span
from receiver import PB, ROOT, ServeProcess

GOOD = ExportTraceServiceRequest(
    resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=[
        Span(trace_id=b"\x5b" * 16, span_id=b"\x01" * 8, name="work",
             start_time_unix_nano=1_700_000_000_000_000_000, end_time_unix_nano=1_700_000_000_000_000_100)
    ])])]
).SerializeToString()  # fmt: skip


# -- 7. workers die with their parent ----------------------------------------------------------


def session_members(sid: int) -> list[int]:
    """Live (non-zombie) processes of session `sid`: the serve started with start_new_session and
    every worker it started (reparented or not, a worker stays in the session)."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        state, _ppid, _pgrp, session = stat.rsplit(")", 1)[1].split()[:4]
        if int(session) == sid and state != "Z":
            members.append(int(entry))
    return members


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_is_free(port: int) -> bool:
    """Whether a new serve could bind it (serve's own bind uses SO_REUSEADDR)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def start_serve(db: Path, port: int, err: Path) -> subprocess.Popen[bytes]:
    with err.open("wb") as stderr:  # the child has its own copy
        return subprocess.Popen(
            [sys.executable, "-m", "traceladder", "serve", "--db", str(db), "--port", str(port), "--workers", "3"],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True,
        )  # fmt: skip


def kill_during_start_up(tmp: Path, port: int, delay: float | None) -> float:
    """Start serve, kill -9 only its main process `delay` seconds later (None: the moment its
    first worker process exists), and wait, bounded, until nothing of it is left. Returns how
    long after the start the kill came."""
    tmp.mkdir()
    started = time.monotonic()
    proc = start_serve(tmp / "s.duckdb", port, tmp / "serve.err")
    try:
        if delay is None:
            while len(session_members(proc.pid)) < 2 and proc.poll() is None:
                assert time.monotonic() - started < 120, "serve started no worker"
                time.sleep(0.005)
        else:
            time.sleep(delay)
        killed_at = time.monotonic() - started
        proc.kill()
        proc.wait()
        for _ in range(600):  # up to a minute: a worker's Python start-up on a loaded machine
            left = session_members(proc.pid)
            if not left:
                break
            time.sleep(0.1)
        assert not left, f"workers {left} outlived serve killed {killed_at:.2f}s after its start"
        assert port_is_free(port), f"port {port} still taken after serve was killed at {killed_at:.2f}s"
        return killed_at
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)  # whatever survived (the assertion above failed)


def test_workers_die_with_a_serve_killed_at_any_moment_of_start_up(tmp_path: Path) -> None:
    port = free_port()
    # The worst moment first: the workers exist but are still starting (importing), so they have
    # not yet looked at their parent — the one that used to take init for its parent.
    workers_at = kill_during_start_up(tmp_path / "at-workers", port, None)
    rng = random.Random(21)
    for i in range(3):  # seeded moments from before the bind to after the workers are serving
        kill_during_start_up(tmp_path / f"random-{i}", port, rng.uniform(0.0, 1.6) * workers_at)
    with ServeProcess(tmp_path / "again.duckdb", "--port", str(port), workers=2) as serve:
        assert serve.port == port  # restarted on the very port: nothing else holds it
        assert serve.get("/healthz").status == 200
        code, err = serve.stop(timeout=60)
    assert code == 0, err


# -- 8. slowloris ------------------------------------------------------------------------------


class Slowloris:
    """`n` connections that each send a request line and then one header byte per `every`
    seconds, never finishing the head; closed ones are reopened (at most `per_tick` a tick).
    Runs on a thread for at most `max_s` seconds, or until `stop()`."""

    def __init__(self, port: int, n: int, every: float = 1.0, per_tick: int = 100, max_s: float = 90) -> None:
        self.port, self.n, self.every, self.per_tick, self.max_s = port, n, every, per_tick, max_s
        self.opened = 0
        self.closed_by_server = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Slowloris:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def ramped(self, timeout_s: float = 20) -> None:
        """Wait until `n` connections have been opened, or `timeout_s` (a server that stopped
        accepting never lets them all in)."""
        deadline = time.monotonic() + timeout_s
        while self.opened < self.n and time.monotonic() < deadline:
            time.sleep(0.05)

    def _open(self) -> socket.socket | None:
        s = socket.socket()
        s.settimeout(0.5)
        try:
            s.connect(("127.0.0.1", self.port))
            s.sendall(b"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        except OSError:
            s.close()
            return None
        s.setblocking(False)
        self.opened += 1
        return s

    def _alive(self, s: socket.socket) -> bool:
        try:
            s.recv(4096)  # end-of-file, or an answer (a 408, then close): either way it is gone
            return False
        except BlockingIOError:
            pass
        except OSError:
            return False
        try:
            s.send(b"a")
        except BlockingIOError:
            pass
        except OSError:
            return False
        return True

    def _run(self) -> None:
        conns: list[socket.socket] = []
        deadline = time.monotonic() + self.max_s
        try:
            while not self._stop.is_set() and time.monotonic() < deadline:
                alive = []
                for s in conns:
                    if self._alive(s):
                        alive.append(s)
                    else:
                        self.closed_by_server += 1
                        s.close()
                conns = alive
                for _ in range(min(self.per_tick, self.n - len(conns))):
                    s = self._open()
                    if s is None:
                        break  # the server is not accepting right now: try again next tick
                    conns.append(s)
                self._stop.wait(self.every)
        finally:
            for s in conns:
                s.close()


def well_behaved(port: int, method: str, path: str, body: bytes = b"") -> tuple[int, bytes, float]:
    """One request on a fresh connection, as a client that waits up to 30 s: (status, body, s)."""
    started = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(method, path, body=body, headers={"Content-Type": PB} if body else {})
        r = conn.getresponse()
        return r.status, r.read(), time.monotonic() - started
    finally:
        conn.close()


def low_open_file_limit(limit: int) -> None:
    """Start the serve as on a host whose `ulimit -n` is `limit` (the soft limit only)."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))


def test_a_slowloris_flood_cannot_keep_healthz_or_otlp_from_answering(tmp_path: Path) -> None:
    # 500 trickling connections against one process with the default cap (256) on a host whose
    # soft open-file limit is 256 (macOS's default; 1,000 connections against Linux's 1,024 is the
    # same attack). Without a cap they took every descriptor; accept() failed and /healthz waited.
    attackers = min(500, resource.getrlimit(resource.RLIMIT_NOFILE)[0] - 100)
    with ServeProcess(tmp_path / "s.duckdb", workers=1, preexec_fn=lambda: low_open_file_limit(256)) as serve:
        with Slowloris(serve.port, attackers) as attack:
            attack.ramped()
            latencies = []
            for _ in range(3):
                status, body, took = well_behaved(serve.port, "GET", "/healthz")
                assert status == 200, body
                latencies.append(took)
                health = json.loads(body)
                assert health["connections"]["open"] <= 256 + 64, health  # the cap, and headroom for closing
                status, body, took = well_behaved(serve.port, "POST", "/v1/traces", GOOD)
                assert status == 200, body
                latencies.append(took)
                time.sleep(0.5)
            assert attack.closed_by_server > 0  # the oldest trickling connections were shed
        print(f"during the flood: well-behaved requests took {', '.join(f'{t:.3f}s' for t in latencies)}")
        # after the flood: still serving, and the shed connections are gone
        status, body, _ = well_behaved(serve.port, "GET", "/healthz")
        assert status == 200, body
        assert well_behaved(serve.port, "POST", "/v1/traces", GOOD)[0] == 200
        # and a flood does not hold up a SIGTERM: connections still sending a head are closed
        with Slowloris(serve.port, 200) as attack:
            attack.ramped()
            code, err = serve.stop(timeout=60)
    assert code == 0, err
    assert "Traceback" not in err


def trickle(port: int, head: bytes, tail: bytes, every: float = 0.2, max_bytes: int = 200) -> bytes:
    """Send `head` at once, then `tail` one byte per `every` seconds (at most `max_bytes` of it)
    until the server answers or closes; returns what it answered (b"" if it never did)."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(head)
        s.setblocking(False)
        for byte in tail[:max_bytes]:
            try:
                answer = s.recv(65536)
                s.setblocking(True)
                return answer + _rest(s)
            except BlockingIOError:
                pass
            try:
                s.send(bytes([byte]))
            except OSError:
                break
            time.sleep(every)
        s.settimeout(5)
        with contextlib.suppress(OSError):
            return s.recv(65536)
    return b""


def _rest(s: socket.socket) -> bytes:
    s.settimeout(5)
    parts = []
    with contextlib.suppress(OSError):
        while chunk := s.recv(65536):
            parts.append(chunk)
    return b"".join(parts)


def test_a_head_or_body_that_trickles_past_its_deadline_gets_408(tmp_path: Path) -> None:
    # Each byte comes well inside --read-timeout, so only a deadline for the whole head (or
    # body) ends it; 200 bytes at 0.2 s would take 40 s.
    args = ("--read-timeout", "60", "--header-timeout", "2", "--body-timeout", "2")
    with ServeProcess(tmp_path / "s.duckdb", *args) as serve:
        answer = trickle(serve.port, b"GET /healthz HTTP/1.1\r\n", b"X-Slow: " + b"a" * 300)
        assert answer.startswith(b"HTTP/1.1 408 "), answer
        assert b"did not arrive within 2s (--header-timeout)" in answer
        head = f"POST /v1/traces HTTP/1.1\r\nContent-Type: {PB}\r\nContent-Length: 300\r\n\r\n".encode()
        answer = trickle(serve.port, head, b"\0" * 300)
        assert answer.startswith(b"HTTP/1.1 408 "), answer
        assert b"did not arrive within 2s (--body-timeout)" in answer
        assert serve.get("/healthz").status == 200
        code, err = serve.stop(timeout=60)
    assert code == 0, err


def test_when_every_connection_is_busy_a_new_one_gets_503_and_retry_after(tmp_path: Path) -> None:
    # Busy = its head is complete and its body on the way: not shed (it may be a real export).
    with ServeProcess(tmp_path / "s.duckdb", "--max-connections", "3", workers=1) as serve:
        head = (
            f"POST /v1/traces HTTP/1.1\r\nContent-Type: {PB}\r\nContent-Length: {len(GOOD)}\r\n"
            "Expect: 100-continue\r\n\r\n"
        ).encode()
        busy = []
        for _ in range(3):
            s = socket.create_connection(("127.0.0.1", serve.port), timeout=30)
            s.sendall(head)
            assert s.recv(65536).startswith(b"HTTP/1.1 100 ")  # its head is read: it is busy
            busy.append(s)
        refused = http.client.HTTPConnection("127.0.0.1", serve.port, timeout=30)
        refused.request("GET", "/healthz")
        reply = refused.getresponse()
        assert reply.status == 503, reply.read()
        assert reply.getheader("Retry-After") == "1"
        assert b"--max-connections" in reply.read()
        refused.close()
        for s in busy:  # the busy ones finish and get their 200
            s.sendall(GOOD)
            assert s.recv(65536).startswith(b"HTTP/1.1 200 ")
            s.close()
        assert serve.get("/healthz").status == 200
        code, err = serve.stop(timeout=60)
    assert code == 0, err


def test_a_cap_the_open_file_limit_cannot_hold_is_one_line_and_exit_2(tmp_path: Path) -> None:
    # With a hard limit of 400 descriptors, 1000 connections would fail in accept() with EMFILE
    # and sit in the listen queue: refuse to start instead, naming the limit to raise.
    def hard_limit_400() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (400, 400))

    r = subprocess.run(
        [sys.executable, "-m", "traceladder", "serve", "--db", str(tmp_path / "s.duckdb"), "--port", "0",
         "--workers", "1", "--max-connections", "1000"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, preexec_fn=hard_limit_400,
    )  # fmt: skip
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines() == [
        "traceladder: --max-connections 1000 needs 1378 open files per process and the limit is 400 "
        "(ulimit -Hn); lower --max-connections or raise the limit"
    ]
