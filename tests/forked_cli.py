"""`cli()` without paying Python's start-up on every call: a pre-imported interpreter forks per call.

A `cli()` call used to start `python -m traceladder` from nothing: 0.2–0.9 s of CPU importing
openai, DuckDB, pyarrow, the OTel SDK and our modules before the command did anything, ~850 times
a suite run. Now each pytest worker keeps one *zygote*: an interpreter that imported every
command's modules once and then only waits. A call sends it argv, environment and working
directory with three open files (stdin, stdout, stderr); it forks, and the child installs them and
runs `runpy.run_module("traceladder", run_name="__main__")` — exactly what `python -m traceladder`
runs — and ends as an interpreter ends (non-daemon threads joined, atexit handlers run, what the
command left open closed, its exit status the command's) without clearing the modules the fork
shared (tests/forked_exit.py). Each command still runs in a process of its own, with its own environment,
working directory, signal dispositions and exit code; only the imports are shared.

What a fork cannot give, a real interpreter does: a call whose `PYTHON*` variables differ from the
zygote's (PYTHONPATH decides `sys.path`, fixed at start-up) starts `python -m traceladder`, as
does every call when the zygote cannot be started. Tests whose subject is the start itself (which
modules a command imports, the installed wheel, a foreground process's Ctrl-C) start real
interpreters on their own, not through `cli()`.

Not hidden by the shared imports: which names a module binds (each still needs its own `import`).
Hidden: a module that uses a submodule it never imports (`pyarrow.compute` after `import pyarrow`)
works here if another module imported it; the documentation tests and the wheel test run the real
`traceladder` executable and would catch it.
"""

from __future__ import annotations

import atexit
import io
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The zygote: imports, then serves one request at a time (a pytest worker runs one test at a
# time). Request: a JSON message with three file descriptors; answers: "<pid>\n", then
# "<wait status>\n" once the child has ended. The child leaves the loop with its request and
# runs the command at top level, so it exits like any `python -m traceladder`.
# PRELOAD is what the zygote imports (tests/project/test_forked_cli.py checks a command's child
# imports little beyond it).
PRELOAD = r"""
from traceladder.cli import commands
for name in commands.COMMANDS.values():
    __import__(name)
import traceladder.cli.main
# And what commands import inside their functions (decisions 620-622 keep imports lazy for start-up
# time): a child that imported it itself paid it on every call. A forked `run` that only refused its
# arguments re-imported openai (~520 modules): 1.9 CPU-s where the call is 0.4 (decision 690).
import jiter, openai.lib.streaming.chat, openai.pagination, openai.resources.chat.chat
import openai.resources.chat.completions.completions, openai.resources.chat.completions.messages
import pyarrow, pyarrow.acero, pyarrow.csv, pyarrow.dataset, pyarrow.parquet, rich._emoji_codes
pyarrow.array([0])  # pyarrow imports pandas (when installed) the first time it converts a list
# Every object so far out of the collector's reach: a child's collections (and the final one of
# its exit) would otherwise walk the whole imported heap, writing each object's GC header and so
# copying nearly every page the fork shared: `--version` took ~0.9 s of wall time here without
# this line, ~0.3 s with it (a loaded 2-core machine). The objects stay alive and reachable as
# they were; only cycles among them are never collected (they were import-time objects anyway).
import gc
gc.freeze()
"""
_SERVE = r"""
import json, os, signal, socket, sys
# How the child ends (tests/forked_exit.py, loaded by its path: `tests` is no package).
import importlib.util
spec = importlib.util.spec_from_file_location("forked_exit", sys.argv[3])
forked_exit = importlib.util.module_from_spec(spec)
spec.loader.exec_module(forked_exit)
conn = socket.socket(fileno=int(sys.argv[1]))
os.write(int(sys.argv[2]), b"ready\n")

def serve():
    while True:
        message, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
        if not message:
            os._exit(0)  # the worker is gone
        pid = os.fork()
        if pid == 0:
            conn.close()
            return json.loads(message), fds
        for fd in fds:
            os.close(fd)
        conn.sendall(b"%d\n" % pid)
        _, status = os.waitpid(pid, 0)
        conn.sendall(b"%d\n" % status)

request, fds = serve()
for target, fd in zip((0, 1, 2), fds):
    os.dup2(fd, target)
    os.close(fd)
os.chdir(request["cwd"])
os.environ.clear()
os.environ.update(request["env"])
sys.path[0] = os.getcwd()  # as `python -m` sets it
# Signal dispositions as a fresh interpreter has them.
signal.signal(signal.SIGINT, signal.default_int_handler)
for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGCHLD):
    signal.signal(signum, signal.SIG_DFL)
signal.pthread_sigmask(signal.SIG_SETMASK, set())
sys.argv = ["traceladder", *request["args"]]
import runpy
try:
    runpy.run_module("traceladder", run_name="__main__", alter_sys=True)
    code = 0
except SystemExit as stop:
    code = stop.code
# Any other exception goes on to the interpreter's own exit (its traceback, its status).
forked_exit.end(code)
"""
_ZYGOTE = PRELOAD + _SERVE


class _Zygote:
    """This process's zygote, started on first use; None when it could not be started."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        ready_r, ready_w = os.pipe()
        fd, log = tempfile.mkstemp(prefix="zygote-", suffix=".log")
        self.log = Path(log)
        self.env = dict(os.environ)
        self.process = subprocess.Popen(
            [sys.executable, "-c", _ZYGOTE, str(theirs.fileno()), str(ready_w), str(ROOT / "tests" / "forked_exit.py")],
            pass_fds=(theirs.fileno(), ready_w), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=fd, cwd=ROOT, env=self.env,
        )  # fmt: skip
        theirs.close()
        os.close(ready_w)
        os.close(fd)
        with os.fdopen(ready_r, "rb") as ready:
            if ready.readline() != b"ready\n":
                raise RuntimeError(f"the zygote did not start: {self.log.read_text()[-2000:]}")
        self.conn = ours
        self.lock = threading.Lock()

    def serves(self, env: dict[str, str]) -> bool:
        """A fork has this interpreter's settings: only calls whose PYTHON* variables are its own."""
        python = {k: v for k, v in env.items() if k.startswith("PYTHON")}
        return python == {k: v for k, v in self.env.items() if k.startswith("PYTHON")}

    def run(
        self, args: tuple[str, ...], env: dict[str, str], cwd: Path, timeout: float | None
    ) -> subprocess.CompletedProcess[str]:
        with (
            self.lock,
            open(os.devnull, "rb") as stdin,
            tempfile.TemporaryFile() as out,
            tempfile.TemporaryFile() as err,
        ):
            request = json.dumps({"args": list(args), "env": env, "cwd": str(cwd)}).encode()
            socket.send_fds(self.conn, [request], [stdin.fileno(), out.fileno(), err.fileno()])
            pid = int(self._answer(None))
            try:
                status = int(self._answer(timeout))
            except TimeoutError:
                os.kill(pid, signal.SIGKILL)
                self._answer(None)  # the zygote reaps it and says so
                raise subprocess.TimeoutExpired(["traceladder", *args], timeout or 0) from None
            out.seek(0)
            err.seek(0)
            return subprocess.CompletedProcess(
                ["traceladder", *args],
                os.waitstatus_to_exitcode(status),
                _text(out.read()),
                _text(err.read()),
            )

    def _answer(self, timeout: float | None) -> bytes:
        """One message of the zygote (SOCK_SEQPACKET keeps each one whole)."""
        self.conn.settimeout(timeout)
        try:
            answer = self.conn.recv(64)
        finally:
            self.conn.settimeout(None)
        if not answer:
            raise RuntimeError(f"the zygote ended: {self.log.read_text()[-2000:]}")
        return answer

    def close(self) -> None:
        self.conn.close()
        self.process.wait(timeout=10)
        self.log.unlink()


def _text(data: bytes) -> str:
    """Decoded as `subprocess.run(text=True)` decodes: the locale's encoding, universal newlines."""
    return io.TextIOWrapper(io.BytesIO(data)).read()


_zygote: _Zygote | None = None
_failed = False


def _get() -> _Zygote | None:
    global _zygote, _failed
    if _zygote is None and not _failed:
        try:
            _zygote = _Zygote()
            atexit.register(_zygote.close)
        except Exception:  # e.g. no fork on this platform: every call starts an interpreter
            _failed = True
    return _zygote


def run_cli(
    args: tuple[str, ...], env: dict[str, str], cwd: Path, timeout: float | None
) -> subprocess.CompletedProcess[str]:
    """`python -m traceladder ARGS` with `env` and `cwd`, output captured as text: forked from the
    zygote when it can serve the call, else a real interpreter (`subprocess.run`)."""
    zygote = _get()
    if zygote is not None and zygote.serves(env):
        return zygote.run(args, env, cwd, timeout)
    return subprocess.run(
        [sys.executable, "-m", "traceladder", *args],
        capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout,
    )  # fmt: skip
