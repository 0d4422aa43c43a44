"""A docs page run as written, its `traceladder` commands forked from a pre-imported interpreter.

A page's bash blocks start `traceladder` a dozen times or more; each started interpreter imports
openai, DuckDB, pyarrow, the OTel SDK and our modules again (~1 CPU-s for `run` or `evaluate`)
before the command does anything. `run_page` runs the page as `doc_pages.run_bash_blocks` does —
one `set -euo pipefail` shell, the same blocks, the same port swap and clean-up — with one
`traceladder` first on PATH: a small script (Python without `site`, ~0.02 CPU-s) that hands its
arguments, environment, working directory and standard streams to a *zygote*, an interpreter that
imported `forked_cli.PRELOAD` once. The zygote forks a child per command, which starts the command
as the installed console script does (`sys.argv[0]` the script, its directory first on
`sys.path`, `sys.exit(main())`) and ends as an interpreter ends (tests/forked_exit.py); the script
exits with the child's status. Commands may nest (a command agent starting `traceladder`): the
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
from forked_cli import PRELOAD, ROOT

# The zygote: PRELOAD's imports, then a loop over connections and children. A connection brings
# a JSON request and the caller's three standard streams; the zygote forks, answers "<pid>\n",
# and "<wait status>\n" when the child has ended. A caller that goes away first (its shell
# killed) takes its child with it (SIGKILL). The worker's end of `life` closing ends the zygote.
_SERVE = r"""
import importlib.util, json, os, select, signal, socket, sys
spec = importlib.util.spec_from_file_location("forked_exit", sys.argv[4])
forked_exit = importlib.util.module_from_spec(spec)
spec.loader.exec_module(forked_exit)
listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
listener.bind("\0" + sys.argv[1])  # an abstract name: no file, no path-length limit
listener.listen(64)
life = int(sys.argv[3])
os.write(int(sys.argv[2]), b"ready\n")

def serve():
    children = {}  # pidfd -> (pid, connection)
    callers = {}  # connection -> pid
    while True:
        ready, _, _ = select.select([listener, life, *children, *callers], [], [])
        for r in ready:
            if r == life:
                for pid, _ in children.values():
                    os.kill(pid, signal.SIGKILL)
                os._exit(0)
            if r is listener:
                conn, _ = listener.accept()
                message, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
                pid = os.fork()
                if pid == 0:  # the command: nothing of the zygote's loop stays open in it
                    for other in (listener, conn, *callers):
                        other.close()
                    for other in children:
                        os.close(other)
                    return json.loads(message), fds
                for fd in fds:
                    os.close(fd)
                conn.sendall(b"%d\n" % pid)
                children[os.pidfd_open(pid)] = (pid, conn)
                callers[conn] = pid
            elif r in children:
                pid, conn = children.pop(r)
                os.close(r)
                _, status = os.waitpid(pid, 0)
                if callers.pop(conn, None) is not None:
                    try:
                        conn.sendall(b"%d\n" % status)
                    except OSError:
                        pass
                conn.close()
            elif r in callers and not r.recv(64):  # the caller is gone: so is its command
                os.kill(callers.pop(r), signal.SIGKILL)

request, fds = serve()
for target, fd in zip((0, 1, 2), fds):
    os.dup2(fd, target)
    os.close(fd)
os.close(life)
os.chdir(request["cwd"])
os.environ.clear()
os.environ.update(request["env"])
sys.path[0] = os.path.dirname(request["script"])  # as the console script's interpreter sets it
signal.signal(signal.SIGINT, signal.default_int_handler)
for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGCHLD):
    signal.signal(signum, signal.SIG_DFL)
signal.pthread_sigmask(signal.SIG_SETMASK, set())
sys.argv = [request["script"], *request["args"]]
try:
    from traceladder.cli.main import main  # what the installed script runs
    code = main()
except SystemExit as stop:
    code = stop.code
forked_exit.end(code)
"""

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
    """A directory holding the forking `traceladder`, while its zygote runs."""
    directory.mkdir()
    sock = f"traceladder-page-{os.getpid()}-{id(directory)}"
    real = Path(sys.executable).with_name("traceladder")
    python_env = {k: v for k, v in os.environ.items() if k.startswith("PYTHON")}
    ready_r, ready_w = os.pipe()
    life_r, life_w = os.pipe()
    log = (directory / "zygote.log").open("wb")
    zygote = subprocess.Popen(
        [sys.executable, "-c", PRELOAD + _SERVE, sock, str(ready_w), str(life_r), str(ROOT / "tests" / "forked_exit.py")],
        pass_fds=(ready_w, life_r), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
        cwd=directory,
    )  # fmt: skip
    os.close(ready_w)
    os.close(life_r)
    log.close()
    try:
        with os.fdopen(ready_r, "rb") as ready:
            assert ready.readline() == b"ready\n", (directory / "zygote.log").read_text()[-2000:]
        script = directory / "traceladder"
        script.write_text(
            _SCRIPT.format(python=sys.executable, real=str(real), socket="\0" + sock, python_env=python_env)
        )
        script.chmod(0o755)
        yield directory
    finally:
        os.close(life_w)  # the zygote ends, and any child still running with it
        zygote.wait(timeout=30)


def run_page(
    page: Path, cwd: Path, port: tuple[str, str], timeout: float = 300
) -> subprocess.CompletedProcess:
    """The page's bash blocks as `doc_pages.run_bash_blocks` runs them, with the forking
    `traceladder` first on PATH."""
    with forked_traceladder(cwd.parent / f"{cwd.name}-bin") as bin_dir:
        return run_bash_blocks(page, cwd, port, timeout, path_first=bin_dir)
