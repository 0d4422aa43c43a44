"""`cli()` without paying Python's start-up on every call: a pre-imported interpreter forks per call.

A `cli()` call used to start `python -m traceladder` from nothing: 0.2–0.9 s of CPU importing
openai, DuckDB, pyarrow, the OTel SDK and our modules before the command did anything, ~850 times
a suite run. Now each pytest worker keeps one *zygote*: an interpreter that imported every
command's modules once and then only waits. A call connects to it and sends argv, environment and
working directory with three open files (stdin, stdout, stderr); it forks, and the child installs
them and runs `runpy.run_module("traceladder", run_name="__main__")` — exactly what `python -m
traceladder` runs; or, for a request naming a console script (tests/docs/forked_pages.py), what
the installed `traceladder` runs — and ends as an interpreter ends (non-daemon threads joined, atexit handlers run, what the
command left open closed, its exit status the command's) without clearing the modules the fork
shared (tests/forked_exit.py). Each command still runs in a process of its own, with its own environment,
working directory, signal dispositions and exit code; only the imports are shared.

The `PYTHON*` variables are read when an interpreter starts (PYTHONPATH decides `sys.path`), so a
zygote serves only calls whose `PYTHON*` variables are its own. A call that names others (a
plug-in on PYTHONPATH) is forked, from its fourth call on, from a second zygote started with them,
kept for the worker until a call names yet others (one such zygote at a time): tests making
many calls with one plug-in path pay the imports about once, not once a call. What a fork cannot give, a real interpreter
does: a call starts `python -m traceladder` when its zygote cannot be started, or when that
zygote's start printed something (a `sitecustomize` on the path that writes to stderr: a real
interpreter prints it on every call, a fork would not). Tests whose subject is the start itself
(which modules a command imports, the installed wheel, a foreground process's Ctrl-C) start real
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
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

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
# The zygote: PRELOAD's imports, then a loop over connections and children. A connection brings
# one request — JSON with the command's argv, environment, working directory and (for a console
# script's start) the script's path — and the caller's three standard streams; the zygote forks,
# answers "<pid>\n", and "<wait status>\n" once the child has ended. Connections are served while
# other children run (a command may start `traceladder` itself, as a docs page's agent does). A
# caller that goes away first takes its child with it (SIGKILL). The child leaves the loop with
# its request and runs the command at top level, so it exits like any `python -m traceladder` or
# installed `traceladder`. The caller's end of `life` closing ends the zygote.
_SERVE = r"""
import json, os, select, signal, socket, sys
# How the child ends (tests/forked_exit.py, loaded by its path: `tests` is no package).
import importlib.util
spec = importlib.util.spec_from_file_location("forked_exit", sys.argv[4])
forked_exit = importlib.util.module_from_spec(spec)
spec.loader.exec_module(forked_exit)
listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
listener.bind("\0" + sys.argv[1])  # an abstract name: no file, no path-length limit
listener.listen(64)
life = int(sys.argv[3])
# What the start wrote reaches the log now, not a child's stdout when its copy of the buffer flushes.
sys.stdout.flush()
sys.stderr.flush()
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
# Signal dispositions as a fresh interpreter has them.
signal.signal(signal.SIGINT, signal.default_int_handler)
for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGCHLD):
    signal.signal(signum, signal.SIG_DFL)
signal.pthread_sigmask(signal.SIG_SETMASK, set())
script = request.get("script")
try:
    if script:  # as the installed console script: its directory first on sys.path, then `entry()`
        sys.path[0] = os.path.dirname(script)
        sys.argv = [script, *request["args"]]
        from traceladder.cli.entry import entry
        code = entry()
    else:  # as `python -m traceladder`: the working directory first on sys.path
        sys.path[0] = os.getcwd()
        sys.argv = ["traceladder", *request["args"]]
        import runpy
        runpy.run_module("traceladder", run_name="__main__", alter_sys=True)
        code = 0
except SystemExit as stop:
    code = stop.code
# Any other exception goes on to the interpreter's own exit (its traceback, its status).
forked_exit.end(code)
"""
_ZYGOTE = PRELOAD + _SERVE


def _python_settings(env: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """The variables an interpreter reads when it starts: what a fork inherits from its zygote."""
    return tuple(sorted((k, v) for k, v in env.items() if k.startswith("PYTHON")))


class Zygote:
    """A zygote started with `python`'s PYTHON* variables (the rest of this process's environment
    as it is), listening at the abstract socket `address`; raises RuntimeError when it did not
    start or its start printed something. `close()` ends it, and any child still running."""

    def __init__(self, python: tuple[tuple[str, str], ...]) -> None:
        name = f"traceladder-zygote-{os.getpid()}-{secrets.token_hex(6)}"
        self.address = "\0" + name
        ready_r, ready_w = os.pipe()
        life_r, self._life = os.pipe()
        fd, log = tempfile.mkstemp(prefix="zygote-", suffix=".log")
        self.log = Path(log)
        self.python = python
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")} | dict(python)
        self.process = subprocess.Popen(
            [sys.executable, "-c", _ZYGOTE, name, str(ready_w), str(life_r), str(ROOT / "tests" / "forked_exit.py")],
            pass_fds=(ready_w, life_r), stdin=subprocess.DEVNULL, stdout=fd, stderr=fd, cwd=ROOT, env=env,
        )  # fmt: skip
        os.close(ready_w)
        os.close(life_r)
        os.close(fd)
        with os.fdopen(ready_r, "rb") as ready:
            started = ready.readline() == b"ready\n"
        printed = self.log.read_text(errors="replace")
        if not started or printed:
            self.close()
            raise RuntimeError(f"the zygote {'printed' if started else 'did not start'}: {printed[-2000:]}")

    def run(
        self, args: tuple[str, ...], env: dict[str, str], cwd: Path, timeout: float | None
    ) -> subprocess.CompletedProcess[str]:
        """`python -m traceladder ARGS` forked, its output captured as text."""
        with (
            socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as conn,
            open(os.devnull, "rb") as stdin,
            tempfile.TemporaryFile() as out,
            tempfile.TemporaryFile() as err,
        ):
            conn.connect(self.address)
            request = json.dumps({"args": list(args), "env": env, "cwd": str(cwd)}).encode()
            socket.send_fds(conn, [request], [stdin.fileno(), out.fileno(), err.fileno()])
            pid = int(self._answer(conn, None))
            try:
                status = int(self._answer(conn, timeout))
            except TimeoutError:
                os.kill(pid, signal.SIGKILL)
                self._answer(conn, None)  # the zygote reaps it and says so
                raise subprocess.TimeoutExpired(["traceladder", *args], timeout or 0) from None
            out.seek(0)
            err.seek(0)
            return subprocess.CompletedProcess(
                ["traceladder", *args],
                os.waitstatus_to_exitcode(status),
                _text(out.read()),
                _text(err.read()),
            )

    def _answer(self, conn: socket.socket, timeout: float | None) -> bytes:
        """One message of the zygote (SOCK_SEQPACKET keeps each one whole)."""
        conn.settimeout(timeout)
        try:
            answer = conn.recv(64)
        finally:
            conn.settimeout(None)
        if not answer:
            raise RuntimeError(f"the zygote ended: {self.log.read_text()[-2000:]}")
        return answer

    def close(self) -> None:
        if self._life >= 0:
            os.close(self._life)  # the zygote ends, and any child still running with it
            self._life = -1
        self.process.wait(timeout=30)
        self.log.unlink(missing_ok=True)


def _text(data: bytes) -> str:
    """Decoded as `subprocess.run(text=True)` decodes: the locale's encoding, universal newlines."""
    return io.TextIOWrapper(io.BytesIO(data)).read()


_DEFAULT = _python_settings(dict(os.environ))
_zygotes: dict[tuple[tuple[str, str], ...], Zygote] = {}
_calls: dict[tuple[tuple[str, str], ...], int] = {}  # calls so far with other settings
_failed: set[tuple[tuple[str, str], ...]] = set()  # settings whose zygote cannot serve
REAL_CALLS = 3  # calls with other settings that start a real interpreter before a zygote


def _get(python: tuple[tuple[str, str], ...] = _DEFAULT) -> Zygote | None:
    """The zygote for these PYTHON* settings, or None when a real interpreter serves the call.

    This process's own settings get theirs on first use. Other settings get theirs on their fourth
    call: a zygote's start (~1.2 CPU-s) costs more than a real `sql` or `domain list` (~0.2) and
    about a real `run` or `evaluate` (~1.5), and a test with its own folder on PYTHONPATH makes
    up to three calls (a command and its read-backs); a plug-in path several tests share makes
    dozens. Of the other settings' zygotes, only the last is kept."""
    if python in _failed:
        return None
    if python != _DEFAULT and python not in _zygotes:
        _calls[python] = _calls.get(python, 0) + 1
        if _calls[python] <= REAL_CALLS:
            return None
    if python not in _zygotes:
        for other in [p for p in _zygotes if p not in (python, _DEFAULT)]:
            _zygotes.pop(other).close()
        try:
            _zygotes[python] = Zygote(python)
        except Exception:  # e.g. no fork on this platform: those calls start an interpreter
            _failed.add(python)
            return None
    return _zygotes[python]


@atexit.register
def _close_all() -> None:
    while _zygotes:
        _zygotes.popitem()[1].close()


def run_cli(
    args: tuple[str, ...], env: dict[str, str], cwd: Path, timeout: float | None
) -> subprocess.CompletedProcess[str]:
    """`python -m traceladder ARGS` with `env` and `cwd`, output captured as text: forked from the
    zygote when it can serve the call, else a real interpreter (`subprocess.run`)."""
    zygote = _get(_python_settings(env))
    if zygote is not None:
        return zygote.run(args, env, cwd, timeout)
    return subprocess.run(
        [sys.executable, "-m", "traceladder", *args],
        capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout,
    )  # fmt: skip
