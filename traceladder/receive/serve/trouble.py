"""A recurring failure, said once: when it starts, when its reason changes, and when it ends.

The receiver retries what fails (a segment write, a fold) every request or every fold interval.
A full disk would otherwise print the same line — or a traceback — many times a second, and the
one line that matters (what is wrong, and that it is over) would scroll away.
"""

from __future__ import annotations

import logging
import threading


class Trouble:
    """Tracks one kind of failure. `failed(reason)` logs the first failure and any change of
    reason; `succeeded()` logs the recovery once, with how many attempts failed meanwhile."""

    def __init__(self, log: logging.Logger, what: str, meanwhile: str) -> None:
        self._log = log
        self._what = what  # e.g. "cannot write segments"
        self._meanwhile = meanwhile  # what the receiver does until it works again
        self._reason: str | None = None
        self._failures = 0
        self._lock = threading.Lock()

    @property
    def active(self) -> bool:
        return self._reason is not None

    def failed(self, reason: str) -> None:
        with self._lock:
            self._failures += 1
            if reason == self._reason:
                return
            self._reason = reason
        self._log.error("%s (%s); %s", self._what, reason, self._meanwhile)

    def succeeded(self, what_now: str) -> None:
        with self._lock:
            if self._reason is None:
                return
            failures, self._reason, self._failures = self._failures, None, 0
        self._log.warning("%s again (%d attempt(s) failed meanwhile)", what_now, failures)
