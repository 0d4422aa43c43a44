"""The registry of command modules, in the order `--help` lists them."""

from traceladder.cli import cases_cmd, domain_cmd, run_cmd

ALL = [run_cmd, domain_cmd, cases_cmd]
