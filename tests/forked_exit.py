"""How a forked `cli()` child ends once its command has returned (tests/forked_cli.py): as an
interpreter ends, in Py_FinalizeEx's order — non-daemon threads joined, `atexit` handlers run,
standard streams flushed, garbage collected — but without clearing the modules the fork shared.

That clearing writes the reference count of every object the zygote imported, copying nearly
every page the fork shared: ~0.15 CPU-s a call, ~130 CPU-s a suite run (decisions 693, 597). What
it would finalise of the command's own objects is finalised here instead. After the zygote's
`gc.freeze()` the collector lists only objects made since the fork: each that has a `__del__` has
it called (one that raises prints "Exception ignored in: …" and its traceback, as at a real exit),
and each file left open is closed, its buffer flushed (a close that fails is silent, as in CPython's
release build); so is each socket and DuckDB connection (its WAL checkpointed, as a real exit
does). tests/project/test_forked_exit.py ends one script both ways and compares what each leaves.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import io
import os
import socket
import sys
import threading
import traceback
from types import TracebackType

import duckdb

# Closed in this order so that nothing a wrapper still buffers is lost: text, then its buffer,
# then the raw file (a real exit gets the same order from the references between them); then
# sockets and DuckDB connections (a real exit closes a connection, checkpointing its WAL).
_LEFT_OPEN = (io.TextIOBase, io.BufferedIOBase, io.RawIOBase, socket.socket, duckdb.DuckDBPyConnection)


def end(code: object) -> None:
    """End this process with `code` (a `SystemExit` code: None is 0, an int its low byte, anything
    else printed on stderr and 1) after doing what an interpreter's exit does that anyone can see."""
    threading._shutdown()  # type: ignore[attr-defined]  # what Py_FinalizeEx calls first
    atexit._run_exitfuncs()
    _flush()
    gc.collect()
    _finalise_what_is_left()
    gc.collect()
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code & 0xFF
    else:
        print(code, file=sys.stderr)
        status = 1
    _flush()
    os._exit(status)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception as error:  # as the interpreter reports a failed flush at exit
            _ignored(stream, error)


def _finalise_what_is_left() -> None:
    left = gc.get_objects()
    for obj in left:
        finaliser = getattr(type(obj), "__del__", None)
        # files are closed below, wrappers before what they wrap, or a wrapper's buffer is lost
        if finaliser is not None and not isinstance(obj, (type, io.IOBase)):
            try:
                finaliser(obj)
            except Exception as error:
                _ignored(finaliser, error, error.__traceback__.tb_next if error.__traceback__ else None)
    for kind in _LEFT_OPEN:
        for obj in left:
            if isinstance(obj, kind) and not getattr(obj, "closed", False):
                with contextlib.suppress(Exception):  # as a release build's IOBase finaliser
                    obj.close()


def _ignored(where: object, error: BaseException, frames: TracebackType | None = None) -> None:
    """What CPython prints for an exception it cannot raise (`PyErr_WriteUnraisable`): where, and
    the traceback from the frame that raised (`frames`; default: the whole)."""
    print(f"Exception ignored in: {where!r}", file=sys.stderr)
    traceback.print_exception(type(error), error, frames or error.__traceback__, file=sys.stderr)
