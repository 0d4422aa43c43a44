"""`cli_in_process()`: a command run by `traceladder.cli.main.main(argv)` inside the test's own
process, for tests whose subject is what a command *does* (the store it writes, the report it
prints), not the command line itself.

`cli()` (tests/forked_cli.py) forks a pre-imported interpreter per call: honest about everything a
process owns, but a fork of a ~180 MB interpreter and its exit cost ~0.3 s per call, ~850 calls a
suite run. In-process the same call is `main(argv)` with the call's environment, working directory,
empty stdin and captured stdout/stderr, and the exit code `python -m traceladder` would give
(`main`'s return value, or the `SystemExit` argparse raises for `--help` and usage errors).

What a process would clean up for us, this checks instead: a command must leave no thread running,
no signal handler, logging handler, OpenTelemetry tracer provider, working directory or
environment variable changed. A leak fails the call (`LeakError`) rather than the next test.

Not for: commands that start children writing to our file descriptors (agents run by
`--agent-cmd`, `serve`'s workers), a Python agent (`--agent python:…` sets the global tracer
provider, as it must), Ctrl-C and SIGTERM, start-up and imports — those keep `cli()` or a real
interpreter, and every command and exit code keeps a real-CLI test (docs/testing.md).
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from traceladder.cli.main import main

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD)


class LeakError(AssertionError):
    """A command left process-wide state behind that a process of its own would have dropped."""


def _global_state() -> dict[str, Any]:
    from opentelemetry import trace

    return {
        "signal handlers": {s: signal.getsignal(s) for s in SIGNALS},
        "logging handlers": list(logging.getLogger().handlers),
        "logging level": logging.getLogger().level,
        "tracer provider": trace._TRACER_PROVIDER,
        "working directory": os.getcwd(),
        "environment": dict(os.environ),
    }


@contextlib.contextmanager
def _as_a_process(env: dict[str, str], cwd: Path) -> Iterator[None]:
    """The environment and working directory of the call, restored after it."""
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)


def _stream() -> io.TextIOWrapper:
    """A text stream over bytes, as a process's stdout is (`.buffer` works for binary output)."""
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline=None, write_through=True)


def _text(stream: io.TextIOWrapper) -> str:
    stream.flush()
    raw = stream.buffer.getvalue()  # type: ignore[attr-defined]
    return io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8").read()


def run_in_process(args: tuple[str, ...], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """`traceladder ARGS` as `main(argv)`, with `env` and `cwd`: (exit code, stdout, stderr)."""
    before_threads = set(threading.enumerate())
    before = _global_state()
    out, err = _stream(), _stream()
    stdin = io.TextIOWrapper(io.BytesIO(b""), encoding="utf-8")
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = stdin, out, err
    try:
        with _as_a_process(env, cwd):
            try:
                code = main(list(args))
            except SystemExit as exc:  # argparse: --help, --version, usage errors
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    result = subprocess.CompletedProcess(["traceladder", *args], code, _text(out), _text(err))
    left = [t for t in threading.enumerate() if t not in before_threads and t.is_alive() and not t.daemon]
    after = _global_state()
    changed = [name for name in before if before[name] != after[name]]
    if left or changed:
        raise LeakError(
            f"`traceladder {' '.join(args)}` left "
            + ", ".join([*(f"thread {t.name}" for t in left), *changed])
            + f" behind (exit {code}; stderr {result.stderr[-500:]!r})"
        )
    return result
