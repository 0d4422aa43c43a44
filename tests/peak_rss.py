"""The peak resident set of one command, and only of that command.

`os.wait4(child)` is not it. Linux keeps a process's high-water mark across `execve`: the child
starts as a copy of the test process (fork, or vfork sharing its memory), and whatever that copy
held before `exec` counts as the child's peak. Measured: a test process holding 600 MB that starts
`python -c pass` reads back a 613 MB peak. In a full `make test` run the pytest worker has grown to
~500 MB by the time a memory test starts, so a child that never held more than 140 MB looked like
it held a 600 MB result.

So the command runs under a small launcher: the launcher (a bare interpreter, ~10 MB) starts it
and reads its peak from `RUSAGE_CHILDREN` — the command's own mark plus, at most, the launcher's
few megabytes it was forked from — and writes it to a file the test reads.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

# argv: [peak file, one core ("1"/"0"), command...]; exit status: the command's.
_LAUNCHER = """
import os, resource, subprocess, sys
peak_file, one_core, argv = sys.argv[1], sys.argv[2] == "1", sys.argv[3:]
if one_core:  # inherited by the command
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
code = subprocess.call(argv)
with open(peak_file, "w") as out:
    out.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(code)
"""


@dataclass(frozen=True)
class Measured:
    returncode: int
    peak_mb: float  # the command's peak resident set


def run_measuring_peak(
    argv: list[str],
    *,
    peak_file: Path,
    one_core: bool = False,
    cwd: Path | str | None = None,
    stdout: int | IO[Any] | None = None,
    stderr: int | IO[Any] | None = None,
    env: dict[str, str] | None = None,
) -> Measured:
    """Run `argv` to its end and return its exit status and peak RSS in MB. `one_core` pins it to
    one CPU (a pool sized from the free cores would otherwise make the figure depend on the load).
    `peak_file` is where the launcher leaves the figure (a path in the test's tmp_path)."""
    code = subprocess.call(
        [sys.executable, "-c", _LAUNCHER, str(peak_file), "1" if one_core else "0", *argv],
        cwd=cwd, stdout=stdout, stderr=stderr, env=env,
    )  # fmt: skip
    kib = int(peak_file.read_text())  # ru_maxrss is in KiB on Linux
    os.unlink(peak_file)
    return Measured(code, kib / 1024)
