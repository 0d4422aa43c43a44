"""User-facing errors, typed. The CLI prints each as one line on stderr and exits with its
`exit_code` — so which exit a failure gets is decided by its type, never by its wording."""


class UserError(Exception):
    """A problem the user can fix: bad input, missing configuration, unreadable store.

    The message is one line saying what is wrong and how to fix it. Exit code 2.
    """

    exit_code = 2


class StoreError(UserError):
    """The store cannot be opened, read or written (not a store, newer schema, corrupt, locked,
    disk full). Nothing half-written is ever called finished."""


class StoreBusy(StoreError):
    """Another process held the store for longer than the lock wait: the one store error that
    goes away by itself, so the only one a polling command (`watch`) may wait out."""


class VerificationFailed(UserError):
    """A hash did not verify (an edited baseline, a changed canonical report). Exit code 1."""

    exit_code = 1


def first_line(exc: BaseException) -> str:
    """An exception's message as one line (its type name when the message is empty)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class Interrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM (what CI runners and `timeout` send), with what to say and the exit
    code: 130 for SIGINT, 143 for SIGTERM. A subclass of KeyboardInterrupt, so everything that
    cleans up on Ctrl-C cleans up on SIGTERM the same way."""

    def __init__(self, message: str = "interrupted", exit_code: int = 130) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
