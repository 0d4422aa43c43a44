"""`traceladder domain validate`: check the frozen domain's schemas, fixtures and whitelist."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from traceladder.domain.retail.domain import RETAIL_DATA_FILES, read_data_files
from traceladder.domain.validate import validate_retail_files
from traceladder.errors import UserError


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("domain", help="inspect and validate the tool domain")
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    validate = actions.add_parser(
        "validate",
        help="check tool schemas (JSON Schema 2020-12, OpenAI tool shape), fixtures, whitelist",
    )
    validate.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="validate data files in this folder instead of the shipped ones",
    )
    validate.set_defaults(handler=run_validate)


def run_validate(args: argparse.Namespace) -> int:
    if args.data_dir is None:
        files = read_data_files()
    else:
        missing = [n for n in RETAIL_DATA_FILES if not (args.data_dir / n).is_file()]
        if missing:
            raise UserError(f"{args.data_dir} lacks {', '.join(missing)}; copy the data files there")
        files = {n: (args.data_dir / n).read_bytes() for n in RETAIL_DATA_FILES}
    problems = validate_retail_files(files)
    for problem in problems:
        print(f"domain: {problem}", file=sys.stderr)
    if problems:
        print(f"domain_validation=failed ({len(problems)} problems)", file=sys.stderr)
        return 2
    print("domain_validation=passed (13 tools, fixtures consistent, whitelist read-only)")
    return 0
