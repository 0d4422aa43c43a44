"""Checks on a store's file around DuckDB's open, each failure a one-line `StoreError`.

- The path must be a regular file, or nothing yet. DuckDB opens whatever it is given: a FIFO
  blocks its `open()` until some writer appears (forever, for `sql` and `report`), a device is
  read as if it were a database.
- A DuckDB file must hold every block it uses. DuckDB reads blocks only when a query needs them,
  so a store cut short (a full disk, an interrupted copy) opened and answered `SELECT 1` until a
  later query reached a missing block. The file is a 4 KB main header, two 4 KB database headers
  (the one with the higher iteration is current) and then blocks of one size; the current
  header records how many. A checkpoint writes the header and *then* truncates free blocks at
  the end, so a healthy file can be shorter than its header says — by free blocks only. Hence two
  steps: the header, read without DuckDB (12 KB), says how many blocks lie past the end of the
  file (almost always none, and then nothing more is asked); only when some do, DuckDB is asked
  (`pragma_database_size`, no data read) whether that many are free. Reading every block instead
  would cost as much as the store is large (measured in docs/decisions.md, 82).

Files DuckDB itself refuses (not a DuckDB file, an unknown header layout) are left to DuckDB, whose
error the store turns into its own line. A file cut by fewer blocks than it has free ones passes
here; DuckDB's own read error then reaches the user when a query needs a missing block.
"""

from __future__ import annotations

import os
import stat
import struct
from pathlib import Path

import duckdb

from traceladder.errors import StoreError

HEADER_BYTES = 4096  # DuckDB's FILE_HEADER_SIZE: the main header, then database headers 1 and 2
BLOCKS_START = 3 * HEADER_BYTES
_MAGIC = b"DUCK"  # at offset 8, after the main header's checksum
# A database header after its 8-byte checksum: iteration, meta block, free list, block count,
# block allocation size (little-endian uint64 each).
_DATABASE_HEADER = struct.Struct("<8xQQQQQ")

_KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def check_store_path(path: Path) -> None:
    """Refuse, without opening it, a path that exists and is not a regular file (a symlink to one
    is fine). A missing path passes: whether it may be created is each command's decision."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StoreError(f"cannot open the store {path}: {exc.strerror or type(exc).__name__}") from None
    if stat.S_ISDIR(mode):
        raise StoreError(f"{path} is a directory; pass --db with a file path")
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
        raise StoreError(f"{path} is {kind}, not a store file; pass --db with a DuckDB file path")


def blocks_past_end(path: Path) -> int:
    """How many of the blocks the file's current header counts lie past its end (0 for a missing,
    empty or non-DuckDB file, or a header layout this check does not know)."""
    try:
        # O_NONBLOCK: should the path have become a FIFO since it was checked, open() must not wait.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        return 0
    except OSError as exc:
        raise StoreError(f"cannot read the store {path}: {exc.strerror or type(exc).__name__}") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            check_store_path(path)
            return 0
        head = handle.read(BLOCKS_START)
    if head[8:12] != _MAGIC:
        return 0  # empty, or not DuckDB's: DuckDB says so when it opens it
    if len(head) < BLOCKS_START:
        raise StoreError(damaged(path, f"it is {info.st_size:,} bytes, shorter than DuckDB's headers"))
    headers = [_DATABASE_HEADER.unpack_from(head, HEADER_BYTES * n) for n in (1, 2)]
    _, _, _, blocks, block_size = max(headers)  # the current header: the higher iteration
    if block_size < HEADER_BYTES or block_size & (block_size - 1) or block_size > 1 << 30:
        return 0  # a layout this check does not know; DuckDB checks its own headers
    return max(0, blocks - (info.st_size - BLOCKS_START) // block_size)


def check_blocks_present(conn: duckdb.DuckDBPyConnection, path: Path) -> None:
    """After DuckDB opened a file with blocks past its end: refuse it unless they are all free."""
    row = conn.execute(
        "SELECT total_blocks, free_blocks, block_size FROM pragma_database_size() "
        "WHERE database_name = current_database()"
    ).fetchone()
    if row is None:
        return
    total, free, block_size = (int(v) for v in row)
    present = max(0, (path.stat().st_size - BLOCKS_START) // block_size)
    if total - present > free:
        raise StoreError(damaged(path, f"{present:,} of its {total:,} blocks are in the file"))


def damaged(path: Path, why: str) -> str:
    return (
        f"the store {path} is damaged: {why} (cut short, e.g. by a full disk or an interrupted "
        "copy); restore it from a copy or start a new --db"
    )
