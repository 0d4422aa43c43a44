"""The registry of command modules, in the order `--help` lists them."""

from traceladder.cli import cases_cmd, domain_cmd, evaluate_cmd, report_cmd, run_cmd, selfcheck_cmd

ALL = [run_cmd, evaluate_cmd, report_cmd, selfcheck_cmd, cases_cmd, domain_cmd]
