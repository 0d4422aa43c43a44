"""Generates docs/cli.md from the parser itself, so the reference can never drift from `--help`.

python -m traceladder.cli.docs > docs/cli.md
"""

from __future__ import annotations

import argparse
import os

from traceladder.cli.main import build_parser
from traceladder.errors import EXIT_CODE_TABLE

WIDTH = "100"
EXIT_CODES_INTRO = """## Exit codes

A contract, enforced by `tests/threats/test_bad_inputs.py` (one row per bad input) and the workflow tests:"""
EXIT_CODES_OUTRO = """\
Every non-zero exit prints exactly **one line** on stderr saying what is wrong and how to fix it \
(`run` also prints progress lines; `cases validate` and `domain validate` list every violation, then \
one summary line). Never a traceback."""


def exit_codes_markdown() -> str:
    """The exit-code section of docs/cli.md, rendered from `traceladder.errors.EXIT_CODE_TABLE`."""
    rows = [f"| {' / '.join(str(int(c)) for c in codes)} | {meaning} |" for codes, meaning in EXIT_CODE_TABLE]
    return "\n".join([EXIT_CODES_INTRO, "", "| code | meaning |", "|---|---|", *rows, "", EXIT_CODES_OUTRO])


def _subparsers(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                found.append((name, child))
    return found


def render_cli_docs() -> str:
    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH  # argparse wraps to the terminal width; pin it
    try:
        parser = build_parser()
        parts = [
            "# Command-line reference",
            "",
            "Generated from `--help` by `python -m traceladder.cli.docs > docs/cli.md`; a test fails when",
            "it is stale.",
            "",
            *exit_codes_markdown().splitlines(),
            "",
            "## traceladder",
            "",
            "```text",
            parser.format_help().rstrip(),
            "```",
        ]
        queue = [(f"traceladder {name}", child) for name, child in _subparsers(parser)]
        while queue:
            title, sub = queue.pop(0)
            parts += ["", f"## {title}", "", "```text", sub.format_help().rstrip(), "```"]
            queue[0:0] = [(f"{title} {name}", child) for name, child in _subparsers(sub)]
        return "\n".join(parts) + "\n"
    finally:
        if previous is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = previous


if __name__ == "__main__":
    print(render_cli_docs(), end="")
