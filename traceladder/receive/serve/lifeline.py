"""A worker's tie to the `serve` process that started it: a pipe only the parent can write to.

The parent keeps the write end for as long as it lives and never writes; every worker holds only
the read end. When the parent exits in any way — `kill -9` included, and at any moment, even
before a worker has started reading — the kernel closes the write end and each worker's read
returns end-of-file. Polling `os.getppid()` cannot do this: a worker that looks only after its
parent has died sees init's pid and takes it for its parent. `PR_SET_PDEATHSIG` is Linux-only and
fires when the *thread* that forked exits, not the process, so the pipe is the one mechanism.

Only stdlib here: the worker imports this before anything heavy, so a worker whose parent died
while it was starting exits before it has loaded pyarrow.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable


def open_lifeline() -> tuple[int, int]:
    """(read_fd, write_fd): pass read_fd to the workers (`pass_fds`), keep write_fd, never write.
    Both are close-on-exec, so no other child of the parent ever holds the write end."""
    return os.pipe()


def _wait_for_eof(read_fd: int) -> None:
    try:
        while os.read(read_fd, 1):  # the parent never writes; anything read is ignored
            pass
    except OSError:  # EBADF/EIO: the pipe is unusable, which means the same
        pass


def watch_lifeline(read_fd: int, on_parent_gone: Callable[[], None]) -> threading.Thread:
    """Call `on_parent_gone` (once, on a daemon thread) when the parent's write end is closed —
    immediately if it already is."""

    def watch() -> None:
        _wait_for_eof(read_fd)
        on_parent_gone()

    thread = threading.Thread(target=watch, name="lifeline", daemon=True)
    thread.start()
    return thread
