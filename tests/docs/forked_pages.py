"""A docs page run as written, its `traceladder` commands forked from a pre-imported interpreter.

A page's bash blocks start `traceladder` a dozen times or more; each started interpreter imports
openai, DuckDB, pyarrow, the OTel SDK and our modules again (~1 CPU-s for `run` or `evaluate`)
before the command does anything. `run_page` runs the page as `doc_pages.run_bash_blocks` does —
one `set -euo pipefail` shell, the same blocks, the same port swap and clean-up — with one
`traceladder` first on PATH: a small script (Python without `site`, ~0.02 CPU-s) that hands its
arguments, environment, working directory and standard streams to a *zygote*, an interpreter that
imported `forked_cli.PRELOAD` once — the `cli()` zygote of tests/forked_cli.py, asked to start the
command as the installed console script does (`sys.argv[0]` the script, its directory first on
`sys.path`, `sys.exit(entry())`); the child ends as an interpreter ends (tests/forked_exit.py) and
the script exits with its status. Commands may nest (a command agent starting `traceladder`): the
zygote serves each connection while others run.

What the page's commands share is the imports, nothing else: each still runs in a process of its
own, with its environment, directory, streams and exit code. A script whose `PYTHON*` variables
differ from the zygote's (they decide start-up) runs the real executable instead, as does every
command when the zygote is gone. The executable's own start-up stays tested where it is the
subject: the other docs pages run the real `traceladder` (tests/docs/test_sending_docs.py,
test_ci_docs.py, …), and tests/project/test_package.py runs the installed wheel's.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from doc_pages import run_bash_blocks
from forked_cli import Zygote

# `traceladder` on the page's PATH. `-IS`: no site, no environment, no current directory — only
# the standard library it needs, so it starts in ~20 ms.
_SCRIPT = r"""#!{python} -IS
import json, os, signal, socket, sys
REAL, SOCKET, PYTHON_ENV = {real!r}, {socket!r}, {python_env!r}

def real():
    os.execv(REAL, [REAL, *sys.argv[1:]])

if {{k: v for k, v in os.environ.items() if k.startswith("PYTHON")}} != PYTHON_ENV:
    real()
conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
try:
    conn.connect(SOCKET)
except OSError:
    real()
request = {{"args": sys.argv[1:], "env": dict(os.environ), "cwd": os.getcwd(), "script": REAL}}
socket.send_fds(conn, [json.dumps(request).encode()], [0, 1, 2])
conn.recv(64)  # the child's pid
status = conn.recv(64)
if not status:
    sys.exit("traceladder: the page's forked interpreter ended")
code = os.waitstatus_to_exitcode(int(status))
if code < 0:  # killed by a signal: so is this process, as a shell would see it
    signal.signal(-code, signal.SIG_DFL)
    os.kill(os.getpid(), -code)
sys.exit(code)
"""


@contextlib.contextmanager
def forked_traceladder(directory: Path) -> Iterator[Path]:
    """A directory holding the forking `traceladder`, while its zygote (`forked_cli.Zygote`) runs."""
    directory.mkdir()
    real = Path(sys.executable).with_name("traceladder")
    python_env = {k: v for k, v in os.environ.items() if k.startswith("PYTHON")}
    zygote = Zygote(tuple(sorted(python_env.items())))
    try:
        script = directory / "traceladder"
        script.write_text(_SCRIPT.format(python=sys.executable, real=str(real), socket=zygote.address,
                                         python_env=python_env))  # fmt: skip
        script.chmod(0o755)
        yield directory
    finally:
        zygote.close()  # and any command still running with it


def run_page(
    page: Path, cwd: Path, port: tuple[str, str], timeout: float = 300
) -> subprocess.CompletedProcess:
    """The page's bash blocks as `doc_pages.run_bash_blocks` runs them, with the forking
    `traceladder` first on PATH."""
    with forked_traceladder(cwd.parent / f"{cwd.name}-bin") as bin_dir:
        return run_bash_blocks(page, cwd, port, timeout, path_first=bin_dir)
