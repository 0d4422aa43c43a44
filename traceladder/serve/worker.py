"""A receiver worker process: serves on an inherited listening socket, writes its own segments.

Started by `traceladder serve --workers N`; not a user command. It stops on SIGTERM like the main
process, and on its own when the main process disappears (kill -9 of the parent).
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import threading
import time
from pathlib import Path
from types import FrameType

from traceladder.serve.handler import ReceiverConfig
from traceladder.serve.server import TOKEN_ENV, serve_socket, stop


def _watch_parent(parent: int, receiver_shutdown: threading.Event) -> None:
    while not receiver_shutdown.is_set():
        if os.getppid() != parent:
            receiver_shutdown.set()
            return
        time.sleep(0.5)


def main() -> int:
    p = argparse.ArgumentParser(prog="traceladder-serve-worker")
    p.add_argument("--fd", type=int, required=True)
    p.add_argument("--segments", type=Path, required=True)
    p.add_argument("--max-body", type=int, required=True)
    p.add_argument("--queue-rows", type=int, required=True)
    p.add_argument("--source", required=True)
    p.add_argument("--read-timeout", type=float, required=True)
    p.add_argument("--sample", type=float, default=1.0)
    args = p.parse_args()
    sock = socket.socket(fileno=args.fd)
    sock.setblocking(False)  # see server.bind: the losers of an accept() race must not block
    config = ReceiverConfig(
        args.max_body, os.environ.get(TOKEN_ENV), args.source, args.read_timeout, args.sample
    )
    receiver = serve_socket(sock, args.segments, config, args.queue_rows)
    stopping = threading.Event()

    def request_stop(*_: object) -> None:
        stopping.set()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        request_stop()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group: the parent decides
    threading.Thread(target=_watch_parent, args=(os.getppid(), stopping), daemon=True).start()

    def stop_when_asked() -> None:
        stopping.wait()
        receiver.shutdown()

    threading.Thread(target=stop_when_asked, daemon=True).start()
    try:
        receiver.serve_forever(poll_interval=0.2)
    finally:
        stop(receiver)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
