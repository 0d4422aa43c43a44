"""Generates docs/cli.md from the parser itself, so the reference can never drift from `--help`.

python -m traceladder.cli.docs > docs/cli.md
"""

from __future__ import annotations

import argparse
import os

from traceladder.cli.main import build_parser

WIDTH = "100"
EXIT_CODES = """## Exit codes

A contract, enforced by `tests/test_bad_inputs.py` (one row per bad input) and the workflow tests:

| code | meaning |
|---|---|
| 0 | ok — a case FAIL or AGENT_ERROR is an outcome, not an error (unless every case of a real \
model's run is AGENT_ERROR: exit 2); so is a reader closing the pipe |
| 1 | the gate failed; a self-check disagreed; `baseline check` found a hash that does not verify; \
`trend` flagged a drop; `compare` found B significantly worse than A (McNemar, p < alpha) |
| 2 | usage, configuration, input or store error: a bad flag, a missing or malformed file, a `--db` \
that is not a regular file (a FIFO, socket, device or directory), a store that is not ours, newer, \
damaged (cut short too), corrupt, unwritable or still busy after the lock wait (`watch --once` too; \
only a polling `watch` waits, for a store that is missing or busy), a full disk, a `sql` query \
stopped by its `--timeout`, incomplete evidence for `gate`, \
`consistency`, `baseline lock` or `compare`; runs of different suites for `compare` or \
`report --runs`; a model or judge endpoint that cannot be reached or refuses the key, \
a run stopped by endpoint errors, a run that measured nothing (every case AGENT_ERROR) |
| 3 | an internal error (a bug — please report it; `TRACELADDER_DEBUG=1` shows the traceback) |
| 130 / 143 | interrupted by Ctrl-C / SIGTERM; a run keeps every finished case (`--resume`). `serve` \
and `watch` are made to be stopped that way: they finish what is in hand and exit 0 |

Every non-zero exit prints exactly **one line** on stderr saying what is wrong and how to fix it \
(`run` also prints progress lines; `cases validate` and `domain validate` list every violation, then \
one summary line). Never a traceback."""


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
            *EXIT_CODES.splitlines(),
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
