"""The `traceladder` entry point: builds the parser from the command modules, maps errors to exits.

Exit codes are a contract: 0 ok, 1 gate failed / self-check disagreement, 2 usage, configuration
or input error (always with a one-line reason on stderr).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from traceladder import __version__
from traceladder.cli import commands
from traceladder.errors import UserError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"traceladder: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="traceladder",
        description="How reliably does your LLM agent call tools? Spans in DuckDB, judged by a "
        "cost ladder of code evaluators.",
    )
    parser.add_argument("--version", action="version", version=f"traceladder {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for module in commands.ALL:
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except UserError as exc:
        print(f"traceladder: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `traceladder … | head`: the reader left; not an error of ours
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("traceladder: interrupted", file=sys.stderr)
        return 130
