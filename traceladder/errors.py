"""User-facing errors, typed, and the exit codes they map to. The CLI prints each error as one
line on stderr and exits with its `exit_code` — so which exit a failure gets is decided by its
type, never by its wording.

`ExitCode` and `EXIT_CODE_TABLE` are the one owner of the exit-code contract: every command
returns a member, and `traceladder.cli.docs` renders the table into docs/cli.md.
"""

from enum import IntEnum


class ExitCode(IntEnum):
    """The exit codes, a contract (docs/cli.md). An `IntEnum`: `sys.exit` and subprocess callers
    see the plain numbers."""

    OK = 0
    CHECK_FAILED = 1  # a check the command exists to make said no: the gate, a self-check, a hash, a drop
    USER_ERROR = 2  # usage, configuration, input or store error: the user can fix it
    INTERNAL = 3  # a bug
    INTERRUPTED = 130  # SIGINT (128 + 2)
    TERMINATED = 143  # SIGTERM (128 + 15)


# One row per code (or pair of codes), in order: rendered into docs/cli.md as is.
EXIT_CODE_TABLE: tuple[tuple[tuple[ExitCode, ...], str], ...] = (
    ((ExitCode.OK,), "ok — a case FAIL or AGENT_ERROR is an outcome, not an error (unless every case of a "
     "real model's run is AGENT_ERROR: exit 2); so is a reader closing the pipe"),
    ((ExitCode.CHECK_FAILED,), "the gate failed; a self-check disagreed; `baseline check` found a hash that "
     "does not verify; `trend` flagged a drop; `compare` found B significantly worse than A (McNemar, p < "
     "alpha)"),
    ((ExitCode.USER_ERROR,), "usage, configuration, input or store error: a bad flag, a missing or malformed "
     "file, a `--db` that is not a regular file (a FIFO, socket, device or directory), a store that is not "
     "ours, newer, damaged (cut short too), corrupt, unwritable or still busy after the lock wait (`watch "
     "--once` too; only a polling `watch` waits, for a store that is missing or busy), a full disk, a `sql` "
     "query stopped by its `--timeout`, incomplete evidence for `gate`, `consistency`, `baseline lock` or "
     "`compare`; runs of different suites for `compare` or `report --runs`; a model or judge endpoint that "
     "cannot be reached or refuses the key, a run stopped by endpoint errors, "
     "a run that measured nothing (every case AGENT_ERROR)"),
    ((ExitCode.INTERNAL,), "an internal error (a bug — please report it; `TRACELADDER_DEBUG=1` shows the "
     "traceback)"),
    ((ExitCode.INTERRUPTED, ExitCode.TERMINATED), "interrupted by Ctrl-C / SIGTERM; a run keeps every "
     "finished case (`--resume`). `serve` and `watch` are made to be stopped that way: they finish what is "
     "in hand and exit 0"),
)  # fmt: skip


class UserError(Exception):
    """A problem the user can fix: bad input, missing configuration, unreadable store.

    The message is one line saying what is wrong and how to fix it. Exit code 2.
    """

    exit_code = ExitCode.USER_ERROR


class StoreError(UserError):
    """The store cannot be opened, read or written (not a store, newer schema, corrupt, locked,
    disk full). Nothing half-written is ever called finished."""


class StoreBusy(StoreError):
    """Another process held the store for longer than the lock wait: the one store error that
    goes away by itself, so the only one a polling command (`watch`) may wait out."""


class VerificationFailed(UserError):
    """A hash did not verify (an edited baseline, a changed canonical report). Exit code 1."""

    exit_code = ExitCode.CHECK_FAILED


def first_line(exc: BaseException) -> str:
    """An exception's message as one line (its type name when the message is empty)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class Interrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM (what CI runners and `timeout` send), with what to say and the exit
    code: 130 for SIGINT, 143 for SIGTERM. A subclass of KeyboardInterrupt, so everything that
    cleans up on Ctrl-C cleans up on SIGTERM the same way."""

    def __init__(self, message: str = "interrupted", exit_code: int = ExitCode.INTERRUPTED) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
