"""`traceladder domain list|validate`: the installed domains; one domain's schemas, fixtures and
whitelist checked."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from traceladder.cli.common import add_domain_option, domain_name
from traceladder.domain.registry import available, load_domain
from traceladder.domain.validate import validate_domain, validate_files
from traceladder.errors import ExitCode, UserError


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("domain", help="list and validate tool domains")
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    listing = actions.add_parser("list", help="the installed domains (built-in and plug-ins)")
    listing.set_defaults(handler=run_list)
    validate = actions.add_parser(
        "validate",
        help="check tool schemas (JSON Schema 2020-12, OpenAI tool shape), chains, whitelist and the "
        "domain's own data checks",
    )
    add_domain_option(validate)
    validate.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="validate the domain rebuilt from the data files in this folder instead of the shipped ones",
    )
    validate.set_defaults(handler=run_validate)


def run_list(args: argparse.Namespace) -> int:
    for name, target in sorted(available().items()):
        print(f"{name}\t{target}")
    return ExitCode.OK


def run_validate(args: argparse.Namespace) -> int:
    domain = load_domain(domain_name(args))
    if args.data_dir is None:
        problems = validate_domain(domain)
    else:
        names = list(domain.input_files)
        missing = [n for n in names if not (args.data_dir / n).is_file()]
        if missing:
            raise UserError(f"{args.data_dir} lacks {', '.join(missing)}; copy the data files there")
        problems = validate_files(domain, {n: (args.data_dir / n).read_bytes() for n in names})
    for problem in problems:
        print(f"domain: {problem}", file=sys.stderr)
    if problems:
        print(f"domain_validation=failed ({len(problems)} problems)", file=sys.stderr)
        return ExitCode.USER_ERROR
    print(
        f"domain_validation=passed ({domain.name}: {len(domain.tools)} tools, data consistent, "
        "whitelist read-only)"
    )
    return ExitCode.OK
