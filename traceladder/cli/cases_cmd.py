"""`traceladder cases validate|coverage`: check a domain's suite and render its coverage matrix."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from traceladder.cases.coverage import coverage_markdown
from traceladder.cases.loader import load_cases, suite_path
from traceladder.cases.validator import validate_suite
from traceladder.cli.common import add_domain_option, domain_name
from traceladder.domain.registry import load_domain
from traceladder.errors import ExitCode, UserError
from traceladder.files import write_text


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("cases", help="validate the case suite, render its coverage matrix")
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    validate = actions.add_parser("validate", help="check every CaseV1 rule; list every violation")
    validate.add_argument("file", nargs="?", type=Path, help="JSONL suite (default: the domain's)")
    add_domain_option(validate)
    validate.set_defaults(handler=run_validate)
    coverage = actions.add_parser("coverage", help="print the coverage matrix as markdown")
    coverage.add_argument("file", nargs="?", type=Path, help="JSONL suite (default: the domain's)")
    coverage.add_argument("--output", type=Path, help="write to this file instead of stdout")
    add_domain_option(coverage)
    coverage.set_defaults(handler=run_coverage)


def run_validate(args: argparse.Namespace) -> int:
    domain = load_domain(domain_name(args))
    path = suite_path(domain, args.file)
    if not path.is_file():
        raise UserError(f"case file {path} does not exist")
    problems = validate_suite(path, domain)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"case_validation=failed ({len(problems)} violations)", file=sys.stderr)
        return ExitCode.USER_ERROR
    print(f"case_validation=passed ({path.name})")
    return ExitCode.OK


def run_coverage(args: argparse.Namespace) -> int:
    domain = load_domain(domain_name(args))
    text = coverage_markdown(load_cases(domain, args.file), domain.default_whitelist)
    if args.output:
        write_text(args.output, text, "coverage matrix")
    else:
        sys.stdout.write(text)
    return ExitCode.OK
