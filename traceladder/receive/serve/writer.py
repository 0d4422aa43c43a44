"""Group commit: requests hand decoded rows to one writer thread, which writes everything that
queued up while it was busy as one segment per signal, then acknowledges all of it at once.

An idle receiver writes each request immediately (no added latency); a loaded one batches more
per fsync the busier it gets. When more than `limit_rows` rows wait, `submit` refuses at once
(the handler answers 503 with Retry-After) instead of queueing without bound. A write that fails
(a full disk) answers its requests 503 too, leaves no temp file behind, and is said once on stderr
— when writes start failing and when they work again — not once per request.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from dataclasses import dataclass, field

import pyarrow as pa

from traceladder.receive.serve.trouble import Trouble
from traceladder.store.segments import SegmentWriter

log = logging.getLogger(__name__)


class Busy(Exception):
    """The writer is behind; the client should retry later."""


class WriteFailed(Exception):
    """The segment could not be made durable (disk full, permissions, …)."""


@dataclass
class _Ticket:
    signal: str
    table: pa.Table
    done: threading.Event = field(default_factory=threading.Event)
    error: str | None = None


class GroupWriter:
    def __init__(self, segments: SegmentWriter, limit_rows: int) -> None:
        self.segments = segments
        self.limit_rows = limit_rows
        self._queue: deque[_Ticket] = deque()
        self._queued_rows = 0
        self._cond = threading.Condition()
        self._closing = False
        self.written_rows = 0
        self.segments_written = 0
        self._trouble = Trouble(log, "cannot write segments", "answering 503 until a write works")
        self._thread = threading.Thread(target=self._run, name="segment-writer", daemon=True)
        self._thread.start()

    @property
    def queued_rows(self) -> int:
        return self._queued_rows

    def submit(self, signal: str, table: pa.Table) -> None:
        """Block until `table` is durable in a segment. Raises Busy or WriteFailed."""
        ticket = _Ticket(signal, table)
        with self._cond:
            if self._closing:
                raise Busy("the receiver is shutting down")
            if self._queued_rows and self._queued_rows + table.num_rows > self.limit_rows:
                raise Busy(f"{self._queued_rows} rows are waiting to be written")
            self._queue.append(ticket)
            self._queued_rows += table.num_rows
            self._cond.notify()
        ticket.done.wait()
        if ticket.error is not None:
            raise WriteFailed(ticket.error)

    def _take(self) -> list[_Ticket] | None:
        with self._cond:
            while not self._queue and not self._closing:
                self._cond.wait()
            if not self._queue:
                return None
            group = list(self._queue)
            self._queue.clear()
            return group

    def _run(self) -> None:
        while (group := self._take()) is not None:
            error = None
            try:
                for signal in ("spans", "logs"):
                    tables = [t.table for t in group if t.signal == signal and t.table.num_rows]
                    if tables:
                        self.segments.write(signal, pa.concat_tables(tables))
                        self.segments_written += 1
            except Exception as exc:  # the requests get a 503; nothing was acknowledged
                error = _reason(exc)
                self._trouble.failed(error)
            else:
                self._trouble.succeeded("writing segments")
            with self._cond:
                rows = sum(t.table.num_rows for t in group)
                self._queued_rows -= rows
                if error is None:
                    self.written_rows += rows
            for ticket in group:
                ticket.error = error
                ticket.done.set()

    def close(self) -> None:
        """Finish what is queued (every waiting request gets its answer), then stop."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        self._thread.join()


def _reason(exc: Exception) -> str:
    """What the client and the log are told: the OS's words for an OS error (no paths)."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return f"{type(exc).__name__}: {exc}"
