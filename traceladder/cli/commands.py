"""The registry of command modules, in the order `--help` lists them."""

from traceladder.cli import domain_cmd

ALL = [domain_cmd]
