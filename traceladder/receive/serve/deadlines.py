"""Reading a connection against a deadline for a whole phase, not a timeout per `recv`.

A per-`recv` timeout is reset by every byte, so a client sending one byte every few seconds holds
its thread forever (slowloris). Here each phase of a request has one deadline: the head (request
line and headers) from its first byte, the body from the end of the head; between requests only
silence is bounded. Every read waits at most until the phase's deadline, and never longer than
the longest silence allowed (`--read-timeout`) — whichever comes first.
"""

from __future__ import annotations

import io
import socket
import time
from collections.abc import Callable

IDLE, HEAD, BODY = "idle", "head", "body"


class PhaseTimeout(TimeoutError):
    """The phase's deadline passed, or the client went silent for too long, mid-phase."""

    def __init__(self, phase: str, message: str) -> None:
        super().__init__(message)
        self.phase = phase


class DeadlineReader(io.RawIOBase):
    """The raw stream under a handler's buffered `rfile`: `recv_into` bounded by the current
    phase's deadline. `begin(phase, seconds)` starts a phase; `None` seconds means no deadline
    (idle). After a read, the socket's timeout is back at `silence_s`, so answers are written
    with it rather than with whatever sliver of a deadline was left."""

    def __init__(
        self,
        sock: socket.socket,
        silence_s: float,
        limits: dict[str, tuple[float, str]],
        was_shed: Callable[[], bool] = lambda: False,
    ) -> None:
        """`limits`: phase → (seconds, the option that sets it), for the timeout's message.
        `was_shed`: whether end-of-file means the receiver itself shut the connection (to make
        room), which ends the connection without an answer rather than reading as a short head."""
        super().__init__()
        self._sock = sock
        self._was_shed = was_shed
        self.silence_s = silence_s
        self._limits = limits
        self.phase = IDLE
        self._deadline: float | None = None
        self.timed_out: PhaseTimeout | None = None  # the timeout raised in this phase, if any

    def begin(self, phase: str) -> None:
        self.phase = phase
        self.timed_out = None
        seconds = self._limits[phase][0] if phase in self._limits else None
        self._deadline = None if seconds is None else time.monotonic() + seconds

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        wait = self.silence_s
        if self._deadline is not None:
            wait = min(wait, self._deadline - time.monotonic())
            if wait <= 0:
                raise self._timeout()
        self._sock.settimeout(wait)
        try:
            n = self._sock.recv_into(buffer)
        except TimeoutError:
            raise self._timeout() from None
        finally:
            self._sock.settimeout(self.silence_s)
        if n == 0 and self._was_shed():
            raise ConnectionAbortedError("connection shed to make room for a new one")
        return n

    def _timeout(self) -> PhaseTimeout:
        if self._deadline is not None and time.monotonic() >= self._deadline:
            seconds, option = self._limits[self.phase]
            what = "request line and headers" if self.phase == HEAD else "request body"
            message = f"the {what} did not arrive within {seconds:g}s ({option})"
        else:
            message = f"nothing arrived for {self.silence_s:g}s (--read-timeout)"
        self.timed_out = PhaseTimeout(self.phase, message)
        return self.timed_out
