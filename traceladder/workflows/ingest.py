"""The `ingest` workflow: OTLP files, directories or stdin into the store.

`ingest_files(db, IngestRequest, on_problem)` → `IngestSummary`. It checks the request, picks the
number of decode processes and calls `receive.ingest.run.ingest`, which holds the decoding and writing
(this module is only its entry: what a command asks for, in one typed request).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from traceladder.errors import UserError
from traceladder.receive.ingest.run import IngestSummary, ingest
from traceladder.store.db import open_store

MAX_AUTO_PROCESSES = 4


@dataclass(frozen=True)
class IngestRequest:
    """`paths`: files, directories (read recursively) or "-" (stdin, at most once); `signal`:
    what protobuf files hold ("traces", "logs"; None: detected); `processes`: decode workers
    (None: the CPUs, at most `MAX_AUTO_PROCESSES`)."""

    paths: tuple[str, ...]
    signal: str | None = None
    processes: int | None = None


def ingest_files(db: Path, request: IngestRequest, on_problem: Callable[[str], None]) -> IngestSummary:
    """Ingest the request's paths into the store at `db`. A file that cannot be read is passed
    to `on_problem` (one line) and listed in the summary's problems; the others are still ingested.
    `UserError` when stdin is named twice, before the store is opened."""
    if request.paths.count("-") > 1:
        raise UserError("- (stdin) can be named once")
    processes = request.processes or min(MAX_AUTO_PROCESSES, os.cpu_count() or 1)
    with open_store(db) as store:
        return ingest(store, request.paths, signal=request.signal, on_problem=on_problem, processes=processes)
