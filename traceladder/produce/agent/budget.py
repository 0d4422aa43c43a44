"""A case's wall-clock budget: its deadline and the run's stop signal.

An HTTP read timeout is not a deadline: a server that sends one byte every two seconds keeps a
read alive forever. So every model request runs on its own daemon thread while the case thread
waits on the deadline and the stop signal; a request that outlives either is abandoned — its
HTTP client is closed, which ends the blocked read — and the case moves on.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

T = TypeVar("T")
_POLL_S = 0.1  # how quickly a waiting case notices the stop signal


class CaseStopped(Exception):
    """The run is being interrupted: abandon this case (it is not recorded and will be resumed)."""


class DeadlineExceeded(Exception):
    """The case's wall-clock budget ran out."""


@dataclass
class Budget:
    deadline: float  # time.monotonic() value
    stop: threading.Event = field(default_factory=threading.Event)

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def check(self) -> None:
        if self.stop.is_set():
            raise CaseStopped()
        if self.remaining() <= 0:
            raise DeadlineExceeded()

    def sleep(self, seconds: float) -> None:
        """Wait, but never past the deadline and never through a stop."""
        if seconds >= self.remaining():
            raise DeadlineExceeded()
        if self.stop.wait(seconds):
            raise CaseStopped()

    def run(self, fn: Callable[[], T], abandon: Callable[[], None]) -> T:
        """`fn()` on a daemon thread, bounded by the deadline and the stop signal. On either, call
        `abandon()` (which must make `fn` return soon, e.g. by closing its connection) and raise."""
        box: dict[str, object] = {}
        done = threading.Event()

        def target() -> None:
            try:
                box["value"] = fn()
            except BaseException as exc:  # handed to the waiting thread, which re-raises it
                box["error"] = exc
            finally:
                done.set()

        threading.Thread(target=target, daemon=True, name="model-request").start()
        while not done.wait(max(0.0, min(_POLL_S, self.remaining()))):
            if self.stop.is_set() or self.remaining() <= 0:
                abandon()
                self.check()
        if "error" in box:
            raise box["error"]  # type: ignore[misc]
        return box["value"]  # type: ignore[return-value]
