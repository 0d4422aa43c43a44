"""`traceladder domain list|validate`: the installed domains; one domain's schemas, fixtures and
whitelist checked."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from traceladder.cli.common import add_domain_option, domain_name
from traceladder.errors import ExitCode, UserError
from traceladder.suite.domain.base import Domain
from traceladder.suite.domain.registry import available, load_domain
from traceladder.suite.domain.validate import validate_domain, validate_files


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
    from traceladder.suite.domain.declarative import directory_spec, read_directory

    directory = directory_spec(domain_name(args), frozenset(available()))
    if directory is not None:  # a declarative domain: every problem of its files, one line each
        if args.data_dir is not None:
            raise UserError(
                "--data-dir rebuilds an installed domain; a domain directory is validated as it is"
            )
        loaded, problems = read_directory(directory)
        if loaded is not None:
            problems = validate_domain(loaded)
        return _verdict(problems, loaded, f"{len(loaded.tools) if loaded else 0} tools, recorded calls valid")
    domain = load_domain(domain_name(args))
    if args.data_dir is None:
        problems = validate_domain(domain)
    else:
        names = list(domain.input_files)
        missing = [n for n in names if not (args.data_dir / n).is_file()]
        if missing:
            raise UserError(f"{args.data_dir} lacks {', '.join(missing)}; copy the data files there")
        problems = validate_files(domain, {n: (args.data_dir / n).read_bytes() for n in names})
    return _verdict(problems, domain, f"{len(domain.tools)} tools, data consistent, whitelist read-only")


def _verdict(problems: list[str], domain: Domain | None, summary: str) -> int:
    for problem in problems:
        print(f"domain: {problem}", file=sys.stderr)
    if problems or domain is None:
        print(f"domain_validation=failed ({len(problems)} problems)", file=sys.stderr)
        return ExitCode.USER_ERROR
    print(f"domain_validation=passed ({domain.name}: {summary})")
    return ExitCode.OK
