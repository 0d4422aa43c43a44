"""The open connections of one receiver process, bounded: which are answering a request, which
only wait, and which to drop when a new one arrives at the cap.

A connection is *busy* from the moment its request head (line and headers) is complete until its
answer is sent; otherwise it is *idle* — between keep-alive requests, or still sending a head.
Dropping an idle connection loses nothing: no request on it was accepted or acknowledged, and a
client with something to send reconnects. So at the cap a new connection sheds the oldest idle
one (idle the longest — a trickling slowloris connection has been idle since it connected), and
is itself refused with 503 + Retry-After only when every connection is busy. Busy connections are
bounded in time by the body deadline, so that refusal lasts at most `--body-timeout`.

A shed connection is shut down at once but its descriptor is freed only when its thread wakes and
finishes; under a flood those can pile up, so they count against a headroom of `cap // 4`
(`closing_headroom`): beyond it new connections are refused until some have closed.
"""

from __future__ import annotations

import resource
import socket
import threading
import time
from dataclasses import dataclass

from traceladder.errors import UserError

# Descriptors a process needs besides its connections: the listening socket, segment files, the
# store and DuckDB's own files (main process), pipes, stdio, Python's imports.
FD_RESERVE = 128


@dataclass
class _State:
    busy: bool
    since: float  # monotonic time it last became idle (or connected)
    shed: bool = False


def closing_headroom(cap: int) -> int:
    return max(8, cap // 4)


class Connections:
    """Thread-safe table of a process's connections: at most `cap` of them not being shed, and at
    most `cap + closing_headroom(cap)` in all."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.limit = cap + closing_headroom(cap)
        self._lock = threading.Lock()
        self._open: dict[socket.socket, _State] = {}
        self.shed_total = 0
        self.refused_total = 0

    def admit(self, conn: socket.socket) -> tuple[bool, list[socket.socket]]:
        """Register a new connection: (admitted, connections to shed to make room). The caller
        shuts the shed ones down (their threads then see end-of-file and finish); a refused
        connection is not registered."""
        with self._lock:
            live = [(s, st) for s, st in self._open.items() if not st.shed]
            victims: list[socket.socket] = []
            if len(self._open) >= self.limit:  # shed ones still closing: no room until they have
                self.refused_total += 1
                return False, []
            if len(live) >= self.cap:
                idle = sorted((st.since, id(s), s) for s, st in live if not st.busy)
                if not idle:
                    self.refused_total += 1
                    return False, []
                _, _, oldest = idle[0]
                self._open[oldest].shed = True
                self.shed_total += 1
                victims.append(oldest)
            self._open[conn] = _State(busy=False, since=time.monotonic())
            return True, victims

    def mark(self, conn: socket.socket, *, busy: bool) -> None:
        with self._lock:
            state = self._open.get(conn)
            if state is not None and state.busy != busy:
                state.busy = busy
                if not busy:
                    state.since = time.monotonic()

    def remove(self, conn: socket.socket) -> None:
        with self._lock:
            self._open.pop(conn, None)

    def was_shed(self, conn: socket.socket) -> bool:
        with self._lock:
            state = self._open.get(conn)
            return state is not None and state.shed

    def busy(self) -> int:
        with self._lock:
            return sum(st.busy for st in self._open.values())

    def idle(self) -> list[socket.socket]:
        with self._lock:
            return [s for s, st in self._open.items() if not st.busy]

    def __len__(self) -> int:
        with self._lock:
            return len(self._open)


def ensure_file_limit(cap: int) -> None:
    """Raise this process's open-file soft limit so `cap` connections fit (children inherit it).
    A connection over the limit fails in accept() with EMFILE and, worse, stays in the listen
    queue; the cap must be what gives out first. A hard limit too low is a UserError naming both."""
    need = cap + closing_headroom(cap) + FD_RESERVE
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= need:
        return
    if hard != resource.RLIM_INFINITY and hard < need:
        raise UserError(
            f"--max-connections {cap} needs {need} open files per process and the limit is {hard} "
            f"(ulimit -Hn); lower --max-connections or raise the limit"
        )
    resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))


class Closer:
    """Closes refused connections gracefully, on one background thread so the accept loop never
    waits: the answer was sent; here the write side is shut and what the client still sends is
    read and dropped for up to `linger_s` — closing with unread data resets the connection, and
    the client could lose the answer. At most `limit` wait at once; the rest close at once."""

    def __init__(self, linger_s: float = 1.0, limit: int = 64) -> None:
        self.linger_s = linger_s
        self.limit = limit
        self._lock = threading.Lock()
        self._waiting: dict[socket.socket, float] = {}  # → when to give up on it
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def close(self, conn: socket.socket) -> None:
        try:
            conn.shutdown(socket.SHUT_WR)
            conn.setblocking(False)
        except OSError:
            conn.close()
            return
        with self._lock:
            if len(self._waiting) >= self.limit:
                conn.close()
                return
            self._waiting[conn] = time.monotonic() + self.linger_s
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="closer", daemon=True)
                self._thread.start()
        self._wake.set()

    def _run(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            while True:
                with self._lock:
                    if not self._waiting:
                        break
                    waiting = dict(self._waiting)
                now = time.monotonic()
                for conn, give_up in waiting.items():
                    if now >= give_up or not _drain(conn):
                        conn.close()
                        with self._lock:
                            self._waiting.pop(conn, None)
                time.sleep(0.05)


def _drain(conn: socket.socket) -> bool:
    """Read and drop what has arrived; False once the client has closed (or reset)."""
    try:
        while True:
            if not conn.recv(1 << 16):
                return False
    except BlockingIOError:
        return True
    except OSError:
        return False
