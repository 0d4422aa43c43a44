"""The registry of commands: each command's name and the module that registers it, in the order
`--help` lists them.

A command's module is imported only when that command runs (`modules_for`): each module pulls in
what its command needs (the agent's client, Arrow, the OTel SDK, the judge), and every command
used to pay for all of them at start-up, `--version` included. A module registers exactly the
one subcommand named here (a test pins it), so the name is all the parser needs to know to pick
the module.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from types import ModuleType

COMMANDS: dict[str, str] = {
    "run": "traceladder.cli.run_cmd",
    "serve": "traceladder.cli.serve_cmd",
    "ingest": "traceladder.cli.ingest_cmd",
    "watch": "traceladder.cli.watch_cmd",
    "trend": "traceladder.cli.trend_cmd",
    "evaluate": "traceladder.cli.evaluate_cmd",
    "export": "traceladder.cli.export_cmd",
    "reindex": "traceladder.cli.reindex_cmd",
    "explain": "traceladder.cli.explain_cmd",
    "report": "traceladder.cli.report_cmd",
    "sql": "traceladder.cli.sql_cmd",
    "gate": "traceladder.cli.gate_cmd",
    "baseline": "traceladder.cli.baseline_cmd",
    "consistency": "traceladder.cli.consistency_cmd",
    "compare": "traceladder.cli.compare_cmd",
    "runs": "traceladder.cli.runs_cmd",
    "selfcheck": "traceladder.cli.selfcheck_cmd",
    "cases": "traceladder.cli.cases_cmd",
    "domain": "traceladder.cli.domain_cmd",
    "tools": "traceladder.cli.tools_cmd",
    "plugins": "traceladder.cli.plugins_cmd",
}


def modules_for(argv: Sequence[str] | None) -> list[ModuleType]:
    """The command modules a parser for `argv` needs (None: all of them, the full parser).

    - `--version` first: none (it prints and exits before any command is looked at);
    - a command name first (the CLI has no top-level option that takes a value): that command's;
    - anything else (`--help`, no command, an unknown one): all of them, so the listing and the
      "invalid choice" error name every command exactly as before.
    """
    if argv and argv[0] == "--version":
        return []
    if argv and argv[0] in COMMANDS:
        return [importlib.import_module(COMMANDS[argv[0]])]
    return [importlib.import_module(module) for module in COMMANDS.values()]
