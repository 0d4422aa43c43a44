"""A real, small filesystem that fills up: a tmpfs mounted for one test. Writing past its size
fails with ENOSPC exactly as a full disk does (RLIMIT_FSIZE would give EFBIG instead, a loop
device needs a file system image). Mounting needs root, which CI has."""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def small_disk(where: Path, size: str = "32m") -> Iterator[Path]:
    where.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(where)],
        capture_output=True,
        text=True,
    )
    assert mounted.returncode == 0, f"a full-disk test mounts a tmpfs and needs root: {mounted.stderr}"
    try:
        yield where
    finally:
        # lazy: a process that still has a file open there must not leave the mount behind
        subprocess.run(["umount", "-l", str(where)], check=True)


def fill(disk: Path) -> Path:
    """Fill `disk` to the last byte; returns the filler file (delete it to free the disk)."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        for size in (1 << 20, 1 << 12, 1):
            chunk = b"\0" * size
            try:
                while True:
                    os.write(fd, chunk)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
    finally:
        os.close(fd)
    return filler
