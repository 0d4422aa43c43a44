"""Generates docs/cli.md from the parser itself, so the reference can never drift from `--help`.

python -m traceladder.cli.docs > docs/cli.md
"""

from __future__ import annotations

import argparse
import os

from traceladder.cli.main import build_parser

WIDTH = "100"


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
            "it is stale. Exit codes: 0 ok; 1 gate failed, self-check disagreement or baseline not verified;",
            "2 usage, configuration or input error (one line on stderr saying what and how to fix).",
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
