"""User-facing errors. The CLI turns each into one line on stderr and exit code 2."""


class UserError(Exception):
    """A problem the user can fix: bad input, missing configuration, unreadable store.

    The message is one line saying what is wrong and how to fix it.
    """
