"""Generates docs/cli.md from the parser itself, so the reference can never drift from `--help`.

python -m traceladder.cli.docs > docs/cli.md
"""

from __future__ import annotations

import argparse
import os

from traceladder.cli.main import build_parser
from traceladder.errors import EXIT_CODE_TABLE
from traceladder.files import LIMITS, MB

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


TRUST_INTRO = """## What comes from outside is data, never an action

Everything traceladder reads from a trace, a store written by others, a domain folder, a cases file,
a `--tools` file, a policy file or a price table is untrusted data (enforced by
`tests/threats/test_trust_boundary.py`, `tests/threats/test_folder_files.py` and the fuzz test
`tests/threats/test_file_inputs_fuzz.py`):

- **Tool schemas** are compiled by one module (`evaluate/rungs/untrusted_schema.py`). No `$ref` is ever
  resolved outside the schema itself: a `$ref` to a URL or a file is a finding ("is not a pointer
  into the definition itself"), never a fetch, and a `$ref` to a missing place is a clear error
  ("leads nowhere a schema is"). Every `pattern` and `patternProperties` key runs on a linear-time
  engine (Rust's `regex`, in jsonschema-rs), which never backtracks, in ECMA-262's meaning; a
  pattern RE2 cannot run (a backreference, a lookaround) makes the schema unusable, said in one
  line, and so does a schema that refers to itself without end or unfolds to more than 100,000
  subschemas. `format: regex` is checked by parsing the string, never by matching with it. Only
  the schemas shipped with traceladder (and installed plug-ins, which are code) skip these checks.
- **Folders are read like archives**: a domain folder's files are read only when they are regular
  files inside the folder. A link leading out of it, a FIFO, a device or a socket is refused in one
  line, never waited on nor read (so never sent to a model or stored). Files named on the
  command line are read the same way (no FIFO, the limits below).
- **Size limits** per file (larger is one line, exit 2):"""
TRUST_OUTRO = """OTLP files given to `ingest` have no limit: they are read request by request."""


def trust_markdown() -> str:
    """The trust-boundary section of docs/cli.md, its limits rendered from `files.LIMITS`."""
    rows = [f"| {name} | {limit // MB} MB |" for name, limit in LIMITS.items()]
    return "\n".join([TRUST_INTRO, "", "| file | at most |", "|---|---|", *rows, "", TRUST_OUTRO])


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
            *trust_markdown().splitlines(),
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
