"""A receiver worker process: serves on an inherited listening socket, writes its own segments.

Started by `traceladder serve --workers N`; not a user command. It stops on SIGTERM like the main
process, and on its own when the main process disappears, in every timing (see `lifeline`): while
it is still starting it exits at once (nothing is in flight); once serving it stops as on SIGTERM,
answering in-flight requests. Either way it exits within `grace` seconds of being told, so a
worker never outlives its parent holding the port.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

# Only stdlib and `lifeline` before the lifeline is watched: a worker whose parent died while it
# was starting must not first spend seconds importing pyarrow with the port in its hands.
from traceladder.receive.serve.lifeline import watch_lifeline

GRACE_AFTER_BODY_S = 30.0  # beyond --body-timeout: decoding and writing the last requests


def _say(message: str) -> None:
    with contextlib.suppress(OSError, ValueError):  # the parent's stderr may be gone with it
        print(f"traceladder serve worker {os.getpid()}: {message}", file=sys.stderr, flush=True)


class Lifecycle:
    """When the worker stops. Before `start_serving`, losing the parent ends the process at once;
    after it, a stop (SIGTERM or a lost parent) lets in-flight requests finish — for at most
    `grace_s`, then the process exits regardless: a wedged worker must not keep the port."""

    def __init__(self, grace_s: float) -> None:
        self.grace_s = grace_s
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._serving = False

    def parent_gone(self) -> None:
        with self._lock:
            if not self._serving:
                os._exit(0)  # still starting: nothing accepted, nothing to answer
        _say("the serve process is gone; stopping")
        self.request_stop()

    def start_serving(self) -> None:
        with self._lock:
            self._serving = True

    def request_stop(self) -> None:
        with self._lock:
            if self.stopping.is_set():
                return
            self.stopping.set()
        timer = threading.Timer(self.grace_s, self._give_up)
        timer.daemon = True
        timer.start()

    def _give_up(self) -> None:
        _say(f"in-flight requests not finished {self.grace_s:g}s after the stop; exiting")
        os._exit(1)


def _arguments() -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="traceladder-serve-worker")
    p.add_argument("--fd", type=int, required=True)
    p.add_argument("--lifeline", type=int, required=True)
    p.add_argument("--segments", type=Path, required=True)
    p.add_argument("--max-body", type=int, required=True)
    p.add_argument("--queue-rows", type=int, required=True)
    p.add_argument("--source", required=True)
    p.add_argument("--read-timeout", type=float, required=True)
    p.add_argument("--header-timeout", type=float, required=True)
    p.add_argument("--body-timeout", type=float, required=True)
    p.add_argument("--max-connections", type=int, required=True)
    p.add_argument("--sample", type=float, default=1.0)
    return p.parse_args()


def main() -> int:
    args = _arguments()
    life = Lifecycle(args.body_timeout + GRACE_AFTER_BODY_S)
    watch_lifeline(args.lifeline, life.parent_gone)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group: the parent decides

    import socket

    from traceladder.receive.serve.handler import ReceiverConfig
    from traceladder.receive.serve.server import TOKEN_ENV, serve_socket, stop

    sock = socket.socket(fileno=args.fd)
    sock.setblocking(False)  # see server.bind: the losers of an accept() race must not block
    config = ReceiverConfig(
        args.max_body,
        os.environ.get(TOKEN_ENV),
        args.source,
        args.read_timeout,
        args.sample,
        header_timeout_s=args.header_timeout,
        body_timeout_s=args.body_timeout,
        max_connections=args.max_connections,
    )
    receiver = serve_socket(sock, args.segments, config, args.queue_rows)

    def on_signal(signum: int, frame: FrameType | None) -> None:
        life.request_stop()

    signal.signal(signal.SIGTERM, on_signal)

    def stop_when_asked() -> None:
        life.stopping.wait()
        receiver.shutdown()

    threading.Thread(target=stop_when_asked, daemon=True).start()
    life.start_serving()
    try:
        receiver.serve_forever(poll_interval=0.2)
    finally:
        stop(receiver)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
