"""Running the receiver: bind, serve in one or more processes, fold segments, stop cleanly.

Process model: the `serve` process binds the socket, serves on it, and folds segments into the
store every `fold_interval_s` when the store is free (it waits for nobody: a command holding the
store just delays the fold). With `workers > 1` it also starts that many − 1 worker processes
(`python -m traceladder.receive.serve.worker`) that accept on the same inherited socket and write their
own segments — decoding is CPU-bound Python, so this is how a receiver uses more than one core.
Workers never open the store. Each worker holds the read end of a pipe whose write end only this
process holds (`lifeline`): however this process ends, even by kill -9 while a worker is still
starting, every worker stops and the port is free again.

SIGTERM / SIGINT: stop accepting, let every in-flight request finish (each gets its answer after
its rows are durable), stop the workers the same way, fold what is pending if the store is free,
exit 0.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from traceladder.errors import ExitCode, UserError, first_line
from traceladder.receive.serve.connections import ensure_file_limit
from traceladder.receive.serve.handler import Receiver, ReceiverConfig
from traceladder.receive.serve.lifeline import open_lifeline
from traceladder.receive.serve.trouble import Trouble
from traceladder.receive.serve.writer import GroupWriter
from traceladder.store.db import Store, StoreBusy
from traceladder.store.segments import SegmentWriter, has_pending, segment_root

log = logging.getLogger(__name__)

TOKEN_ENV = "TRACELADDER_TOKEN"


@dataclass(frozen=True)
class ServeOptions:
    db: Path
    host: str
    port: int
    receiver: ReceiverConfig
    workers: int
    queue_rows: int
    fold_interval_s: float


def is_loopback(host: str) -> bool:
    """True when every address `host` resolves to is a loopback address."""
    try:
        infos = socket.getaddrinfo(host, None)
    except socket.gaierror as exc:
        raise UserError(f"cannot resolve --host {host!r}: {exc.strerror}") from None
    return all(ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]).is_loopback for info in infos)


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise UserError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.listen(128)
    sock.set_inheritable(True)
    # Every process sharing the socket wakes for a connection and only one accept() wins: a
    # blocking accept() in the others would sleep until the next connection, deaf to SIGTERM.
    # O_NONBLOCK lives on the shared open file, so this covers the workers too; a lost race is
    # then a BlockingIOError, which socketserver ignores.
    sock.setblocking(False)
    return sock


def _start_workers(
    sock: socket.socket, options: ServeOptions, lifeline: int
) -> list[subprocess.Popen[bytes]]:
    """Start the worker processes; `lifeline` is the read end of the pipe this process holds."""
    env = dict(os.environ)
    if options.receiver.token is not None:  # the environment, not argv: argv is visible in `ps`
        env[TOKEN_ENV] = options.receiver.token
    else:
        env.pop(TOKEN_ENV, None)
    config = options.receiver
    args = [
        sys.executable, "-m", "traceladder.receive.serve.worker", "--fd", str(sock.fileno()),
        "--lifeline", str(lifeline),
        "--segments", str(segment_root(options.db)), "--max-body", str(config.max_body),
        "--queue-rows", str(options.queue_rows), "--source", config.source,
        "--read-timeout", repr(config.read_timeout_s), "--header-timeout", repr(config.header_timeout_s),
        "--body-timeout", repr(config.body_timeout_s), "--max-connections", str(config.max_connections),
        "--sample", repr(config.sample_rate),
    ]  # fmt: skip
    return [
        subprocess.Popen(args, pass_fds=[sock.fileno(), lifeline], env=env, stdin=subprocess.DEVNULL)
        for _ in range(options.workers - 1)
    ]


def serve_socket(sock: socket.socket, segments: Path, config: ReceiverConfig, queue_rows: int) -> Receiver:
    """A receiver on an already bound socket; call `serve_forever`, then `stop`."""
    writer = GroupWriter(SegmentWriter(segments), queue_rows)
    return _Receiver(sock, writer, config)


class _Receiver(Receiver):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that resets or drops its connection is routine under load: socketserver's
        default would print a traceback for it. Anything else is still reported."""
        if isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            log.debug("connection from %s dropped", client_address)
            return
        super().handle_error(request, client_address)


def stop(receiver: Receiver) -> None:
    """Stop accepting, answer every in-flight request, flush the writer."""
    receiver.shutdown()
    receiver.close_idle_connections()
    receiver.server_close()  # joins request threads (block_on_close)
    receiver.writer.close()


def _fold_loop(db: Path, interval_s: float, stopped: threading.Event) -> None:
    from traceladder.store.fold import fold_pending

    trouble = Trouble(log, f"cannot fold segments into {db}", "they stay safe on disk; retrying")
    while not stopped.wait(interval_s):
        if not has_pending(db):
            continue
        try:
            with Store(db, lock_timeout=0) as store:  # never wait: the segments are safe meanwhile
                fold_pending(store, until=stopped.is_set)
        except StoreBusy as exc:  # a command holds the store: routine, the next turn folds
            log.debug("fold skipped: %s", exc)
        except Exception as exc:  # folding is housekeeping: say it once, keep receiving
            trouble.failed(first_line(exc))
        else:
            trouble.succeeded("folding segments")


def final_fold(db: Path, wait_s: float = 5.0, budget_s: float = 10.0) -> str:
    """Fold what is pending before exiting, for at most about `budget_s` (a backlog left over is
    safe on disk and folded by the next command that opens the store). Never raises: a fold that
    cannot run (a full disk, a held store) leaves the segments for the next command."""
    from traceladder.store.fold import fold_pending

    if not has_pending(db):
        return "nothing pending"
    try:
        deadline = time.monotonic() + budget_s
        with Store(db, lock_timeout=wait_s) as store:
            result = fold_pending(store, until=lambda: time.monotonic() > deadline)
        left = " (the rest is folded by the next command that opens the store)" if has_pending(db) else ""
        return f"folded {result.segments} segments{left}"
    except Exception as exc:
        return f"segments left for the next command to fold ({first_line(exc)})"


def run(options: ServeOptions, announce: threading.Event | None = None) -> int:
    ensure_file_limit(options.receiver.max_connections)  # before the workers: they inherit it
    sock = bind(options.host, options.port)
    host, port = sock.getsockname()[:2]
    receiver = serve_socket(sock, segment_root(options.db), options.receiver, options.queue_rows)
    # Kept open (never written) until the workers are gone; the kernel closes it if we are killed.
    lifeline_read, lifeline_write = open_lifeline()
    try:
        workers = _start_workers(sock, options, lifeline_read)
    finally:
        os.close(lifeline_read)
    stopped = threading.Event()
    folder = threading.Thread(
        target=_fold_loop, args=(options.db, options.fold_interval_s, stopped), daemon=True
    )
    folder.start()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        # shutdown() blocks until serve_forever returns: call it off the main thread
        threading.Thread(target=receiver.shutdown, daemon=True).start()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    print(
        f"traceladder serve: listening on http://{host}:{port} (/v1/traces, /v1/logs, /healthz); "
        f"store {options.db}; {options.workers} process(es)",
        file=sys.stderr,
        flush=True,
    )
    if announce is not None:
        announce.set()
    try:
        receiver.serve_forever(poll_interval=0.2)
    finally:
        for worker in workers:
            worker.send_signal(signal.SIGTERM)
        stop(receiver)
        for worker in workers:
            worker.wait()
        stopped.set()
        folder.join()
        for s, handler in previous.items():
            signal.signal(s, handler)
        os.close(lifeline_write)
        sock.close()
    print(f"traceladder serve: stopped; {final_fold(options.db)}", file=sys.stderr, flush=True)
    return ExitCode.OK
