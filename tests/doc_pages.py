"""Running a docs page as written: its fenced blocks, and its bash blocks in order in one shell.

Pages name fixed ports (4318, 8786) that may be taken on a test machine, so the caller swaps a
port for a free one; a failing command stops the background processes the page started, and a
hang kills the whole process group, so no receiver or scheduler outlives its test.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path


def blocks(page: Path, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", page.read_text(encoding="utf-8"), re.S)


def free_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return str(probe.getsockname()[1])


def run_bash_blocks(
    page: Path, cwd: Path, port: tuple[str, str], timeout: float = 300, path_first: Path | None = None
) -> subprocess.CompletedProcess:
    """The page's bash blocks in one `set -euo pipefail` shell in `cwd`, `port[0]` replaced by
    `port[1]`, with this interpreter's `traceladder` first on PATH (after `path_first`, when given:
    a directory whose `traceladder` the page should run instead, as tests/docs/forked_pages.py's)."""
    script = "set -euo pipefail\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n" + "\n".join(
        blocks(page, "bash")
    ).replace(*port)
    first = [str(path_first)] if path_first is not None else []
    env = {
        **os.environ,
        "PATH": os.pathsep.join([*first, os.path.dirname(sys.executable), os.environ["PATH"]]),
    }
    proc = subprocess.Popen(
        ["bash", "-c", script], cwd=cwd, env=env, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )  # fmt: skip
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    finally:  # a hang must not leave a background process behind
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
