"""The process's entry point: the `traceladder` executable and `python -m traceladder` run `entry`,
which is `cli.main.main` with Python's cyclic garbage collector kept off what start-up makes.

Start-up makes what lives as long as the process: the modules a command imports, their classes,
functions and constants (~26,000 objects the collector tracks once `report` has parsed its flags:
DuckDB's Python layer, argparse, ours). None of it is garbage, yet the collector walked all of it:
a young generation's worth at a time while the imports ran, then the whole heap again in the
interpreter's last collection at exit — ~25 ms of the ~0.24 CPU-s of a 10k-trace `report`
(decision 761). So the collector is off until the
command's module is imported and its flags are parsed; then what exists is frozen (`gc.freeze()`:
alive and reachable as before, out of every collection's reach, the last one's included) and the
collector is on again for all the command itself makes, every cycle of it collected as before.

Only a process's own entry point may do this. `main` called in a process that goes on — the tests'
`cli_in_process`, a program embedding traceladder — must not leave that process's objects frozen
or its collector off, so `main` itself does neither.
"""

from __future__ import annotations

import gc


def entry() -> int:
    """Run the command of this process's arguments; its exit code."""
    gc.disable()
    try:
        from traceladder.cli.main import parse_command, run_command  # DuckDB, argparse, ours

        args = parse_command()  # the command's module imported (SystemExit: usage, --help)
    finally:
        gc.freeze()
        gc.enable()
    return run_command(args)
