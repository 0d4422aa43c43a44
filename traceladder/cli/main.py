"""The `traceladder` entry point: builds the parser from the command modules, maps errors to exits.

Only the module of the command being run is imported (`commands.modules_for`): start-up is paid
on every command, and the heavy libraries belong to the commands that need them.

Exit codes are a contract (docs/cli.md): 0 ok; 1 gate failed, self-check disagreement or a hash
that does not verify; 2 usage, configuration, input or store error; 3 an internal error (a bug);
130 / 143 interrupted by SIGINT / SIGTERM. Every non-zero exit prints exactly one line on stderr
— never a traceback (set TRACELADDER_DEBUG=1 to see one for an internal error).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import traceback
from collections.abc import Sequence
from types import FrameType

import duckdb

from traceladder import __version__
from traceladder.cli import commands
from traceladder.errors import ExitCode, Interrupted, UserError, first_line
from traceladder.text import printable

EXIT_INTERNAL = ExitCode.INTERNAL  # kept for importers; the table is traceladder.errors


def _raise_interrupted(signum: int, frame: FrameType | None) -> None:
    """SIGTERM stops a command exactly like Ctrl-C (a run keeps its finished cases)."""
    raise Interrupted(f"interrupted by {signal.Signals(signum).name}", 128 + signum)


def _say(message: object) -> None:
    """One line on stderr: data in messages can hold newlines and control characters."""
    text = " ".join(printable(message).split("\n"))
    print(f"traceladder: {text}", file=sys.stderr, flush=True)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        """A usage error is one line, like every other error, pointing at --help for the rest."""
        _say(f"{message} (see `{self.prog} --help`)")
        raise SystemExit(ExitCode.USER_ERROR)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser for `argv` (default: the full parser, every command registered, as docs/cli.md
    shows it): only the command modules parsing `argv` needs are imported."""
    parser = _Parser(
        prog="traceladder",
        description="How reliably does your LLM agent call tools? Spans in DuckDB, judged by a "
        "cost ladder of code evaluators.",
    )
    parser.add_argument("--version", action="version", version=f"traceladder {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for module in commands.modules_for(argv):
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command `argv` names (default: this process's arguments); its exit code."""
    return run_command(parse_command(argv))


def parse_command(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """`argv`'s command and options, its command's module imported (`SystemExit` for a usage
    error, --help and --version)."""
    argv = sys.argv[1:] if argv is None else argv
    return build_parser(argv).parse_args(argv)


def run_command(args: argparse.Namespace) -> int:
    """The parsed command's handler run; its exit code."""
    # Restored on the way out: a SIGTERM after `main` returned (interpreter shutdown) must not
    # raise Interrupted outside this handler, and a caller running commands in-process (the tests)
    # keeps its own disposition.
    previous_sigterm = (
        signal.signal(signal.SIGTERM, _raise_interrupted) if hasattr(signal, "SIGTERM") else None
    )
    try:
        return _run(args)
    finally:
        if previous_sigterm is not None:
            signal.signal(signal.SIGTERM, previous_sigterm)


def _run(args: argparse.Namespace) -> int:
    """The command's handler, every error mapped to its one line and exit code."""
    try:
        return int(args.handler(args) or ExitCode.OK)
    except UserError as exc:
        _say(exc)
        return exc.exit_code
    except BrokenPipeError:  # `traceladder … | head`: the reader left, which is not an error
        # Point stdout at /dev/null so the interpreter's final flush cannot fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return ExitCode.OK
    except KeyboardInterrupt as exc:
        _say(exc.message if isinstance(exc, Interrupted) else "interrupted")
        return exc.exit_code if isinstance(exc, Interrupted) else ExitCode.INTERRUPTED
    except duckdb.Error as exc:  # a store that fails mid-command: corrupt, vanished, unwritable
        _say(f"store error: {first_line(exc)}")
        return ExitCode.USER_ERROR
    except RecursionError:
        _say("input nested too deeply to process")
        return ExitCode.USER_ERROR
    except MemoryError:
        _say("out of memory; narrow the query or the selection")
        return ExitCode.USER_ERROR
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else ""
        _say(f"{exc.strerror or type(exc).__name__}{where}")
        return ExitCode.USER_ERROR
    except Exception as exc:  # a bug: still one line (the traceback on request), never exit 1
        if os.environ.get("TRACELADDER_DEBUG"):
            traceback.print_exc()
        _say(f"internal error ({type(exc).__name__}: {first_line(exc)}); this is a bug, please report it")
        return ExitCode.INTERNAL
