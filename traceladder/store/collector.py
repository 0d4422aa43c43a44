"""The cyclic garbage collector, paused while a batch is decoded and written.

A batch of spans is millions of small objects — each span's attributes parsed to dicts and lists,
the extraction stage's views and readings — that live until the batch is stored and form no
reference cycles: reference counting frees all of them. With the collector on, every one of its
collections scans the objects allocated since the last, and each full collection rescans every
object still alive; for ingest's batches that was ~15% of its CPU (docs/decisions.md 720). Paused,
nothing is freed later than it would be, except objects in a cycle, which wait for the
collector's next run after the batch. Bulk judging (`evaluate/passes.py`) pauses it for the same
reason (~40% of evaluate's time at 100k traces, before).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector off meanwhile; on again after, if it was on (a nested pause keeps it
    off until the outer one ends)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
