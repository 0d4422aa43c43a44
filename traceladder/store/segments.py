"""Receiver segments: immutable Parquet files beside the store that hold acknowledged rows until a
writer folds them into the DuckDB file.

Why (docs/decisions.md, "serve writes segments"): DuckDB admits one writing process per file and
a writer locks out every other process, readers included. The receiver therefore never opens the
store. It writes each group of requests as `<db>.segments/<signal>/<name>.parquet` — temp file,
fsync, atomic rename, fsync of the directory — and only then answers 200, so an acknowledged row
survives kill -9. Any process that opens the store for writing folds pending segments in first
(`fold_pending`), one bounded transaction at a time, recording each segment in
`ingested_segments` in the same transaction and unlinking it after the commit; a crash between
the two leaves a recorded segment that the next fold just deletes.

A segment's name carries the CRC-32 of its bytes (`<stem>.crc32-<8 hex>.parquet`, docs/decisions.md
"segment checksums"): the fold checks it before reading, so a flipped bit is set aside, never
folded. A name without one (written before checksums) is folded as before.
"""

from __future__ import annotations

import itertools
import os
import re
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import pyarrow as pa

SIGNALS = ("spans", "logs")
_TMP = ".tmp-"
_counter = itertools.count()
_CHECKSUM = re.compile(r"\.crc32-([0-9a-f]{8})\.parquet$")


class Segment(NamedTuple):
    signal: str
    path: Path

    @property
    def name(self) -> str:
        return f"{self.signal}/{self.path.name}"

    @property
    def checksum(self) -> int | None:
        """The CRC-32 its name promises for its bytes; None for a segment written before names
        carried one."""
        m = _CHECKSUM.search(self.path.name)
        return int(m.group(1), 16) if m else None


class ChecksumMismatch(ValueError):
    """A segment's bytes are not the ones that were written (a flipped bit, a truncated copy)."""


def read_verified(segment: Segment) -> bytes:
    """The segment's bytes, after checking them against the checksum in its name. The caller
    parses these very bytes, so what was checked is what is folded."""
    data = segment.path.read_bytes()
    want = segment.checksum
    if want is not None and (got := zlib.crc32(data)) != want:
        raise ChecksumMismatch(f"checksum mismatch (its name says crc32 {want:08x}, its bytes {got:08x})")
    return data


def segment_root(db_path: Path) -> Path:
    """Where the receiver for the store at `db_path` keeps its segments."""
    db_path = Path(db_path)
    return db_path.with_name(db_path.name + ".segments")


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class SegmentWriter:
    """Writes durable segments for one receiver process (names carry its pid, so processes never
    collide)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        for signal in SIGNALS:
            (self.root / signal).mkdir(parents=True, exist_ok=True)
        _fsync_dir(self.root)
        self._remove_stale_temp_files()

    def _remove_stale_temp_files(self) -> None:
        """Temp files of dead processes were never acknowledged: nothing in them is owed to anyone."""
        for signal in SIGNALS:
            for tmp in (self.root / signal).glob(f"{_TMP}*"):
                pid = tmp.name[len(_TMP) :].split("-", 1)[0]
                if pid.isdigit() and not _alive(int(pid)):
                    tmp.unlink(missing_ok=True)

    def write(self, signal: str, table: pa.Table) -> Segment:
        """Write `table` as one segment and return it once it is durable. On any failure (a full
        disk) nothing is left behind: the temp file is removed, and the error is raised."""
        folder = self.root / signal
        stem = f"{time.time_ns():020d}-{os.getpid()}-{next(_counter):08d}"
        tmp = folder / f"{_TMP}{os.getpid()}-{stem}.parquet"
        # zstd level 1: ~5 µs/span, and the strings are unique, so no dictionary pages (measured).
        # Serialised in memory first, so the checksum in the name covers every byte written.
        import pyarrow as pa  # here, not at the top: every command's open_store asks has_pending
        import pyarrow.parquet as pq

        sink = pa.BufferOutputStream()
        pq.write_table(table, sink, compression="zstd", compression_level=1, use_dictionary=False)
        data = sink.getvalue()
        final = folder / f"{stem}.crc32-{zlib.crc32(data):08x}.parquet"
        try:
            with open(tmp, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, final)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        _fsync_dir(folder)
        return Segment(signal, final)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def pending(root: Path) -> list[Segment]:
    """Complete segments waiting to be folded in, oldest first (names start with a timestamp)."""
    found: list[Segment] = []
    for signal in SIGNALS:
        folder = Path(root) / signal
        if folder.is_dir():
            found.extend(Segment(signal, p) for p in folder.glob("*.parquet") if not p.name.startswith("."))
    return sorted(found, key=lambda s: (s.path.name, s.signal))


def batches(segments: list[Segment], max_rows: int) -> Iterator[list[Segment]]:
    """Group segments so one fold transaction stays bounded (about `max_rows` rows)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    group: list[Segment] = []
    rows = 0
    for segment in segments:
        try:
            n = pq.read_metadata(segment.path).num_rows
        except (OSError, pa.ArrowException):  # damaged: folding sets it aside
            n = 0
        if group and rows + n > max_rows:
            yield group
            group, rows = [], 0
        group.append(segment)
        rows += n
    if group:
        yield group


def has_pending(db_path: Path) -> bool:
    """Cheap check (a few stat calls) for segments waiting beside the store at `db_path`."""
    root = segment_root(db_path)
    return any(any((root / signal).glob("*.parquet")) for signal in SIGNALS if (root / signal).is_dir())
