"""The console a command prints its tables through: rich, sized to the reader.

Its own module so that rich (~50 ms of start-up) loads only for the commands that print through
it, not for every command that shares `cli.common`'s options.
"""

from __future__ import annotations

import os
from typing import Any

from rich.console import Console

PIPED_WIDTH = 120  # rich's 80 would fold every explanation in a CI log


class StdoutConsole(Console):
    """A rich console for stdout whose closed pipe (`traceladder … | head`) reaches `main`, which
    treats it as the reader leaving — rich's own handler would exit 1. Emoji codes are off: a
    model or run named `x:thumbs_up:` is data and prints as written (markup is escaped where data
    meets a string)."""

    def __init__(self, **options: Any) -> None:
        options.setdefault("emoji", False)
        super().__init__(**options)

    def on_broken_pipe(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")


def terminal(min_width: int = 0) -> Console:
    """The real terminal's width, at least `min_width`. Piped output is exactly as wide as
    `COLUMNS` says when it is set (the reader's own width: a pager, a CI log viewer, `fold`),
    else `PIPED_WIDTH` (at least `min_width`). Tables wrap their cells to fit, never cut them."""
    console = StdoutConsole()
    # Without colours (piped, NO_COLOR, a dumb terminal) rich's highlighter only adds styles
    # nobody sees: off, the output is the same bytes for less work.
    highlight = console.color_system is not None
    if console.is_terminal:
        return StdoutConsole(width=max(console.width, min_width), highlight=highlight)
    return StdoutConsole(width=_columns() or max(PIPED_WIDTH, min_width), highlight=highlight)


def _columns() -> int | None:
    raw = os.environ.get("COLUMNS", "").strip()
    return int(raw) if raw.isdigit() and int(raw) > 0 else None
