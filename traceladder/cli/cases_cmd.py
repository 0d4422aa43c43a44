"""`traceladder cases validate|coverage|from-traces`: check a domain's suite, render its coverage
matrix, record stored traces as a declarative domain with its suite."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from traceladder.cli.common import add_db_option, add_domain_option, db_path, domain_name, int_range
from traceladder.errors import ExitCode, UserError
from traceladder.files import write_text
from traceladder.suite.cases.coverage import coverage_markdown
from traceladder.suite.cases.loader import load_cases, suite_path
from traceladder.suite.cases.validator import validate_suite
from traceladder.suite.domain.registry import load_domain


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "cases", help="validate the case suite, render its coverage matrix, record one from traces"
    )
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
    _register_from_traces(actions)


def _register_from_traces(actions: argparse._SubParsersAction) -> None:
    record = actions.add_parser(
        "from-traces",
        help="write a declarative domain and its case suite (DIR/cases.jsonl) from stored traces",
        description="Each selected trace becomes one case: its user request, its calls as the golden "
        "calls (arguments as sent), its definitions in tools.json, its results in responses.jsonl "
        "(replayed offline), the system prompt it sent in system_prompt.txt. Definitions come from the "
        "traces that become cases (then other selected traces of their services, then --tools FILE). "
        "Filters combine (all must hold). A trace that cannot be a case (no user "
        "request, arguments that are not a JSON object or do not fit the definition, a request another "
        "trace already made, a tool without a recorded definition) stops with one line naming it and "
        "exit 2, nothing written — or, with --skip-bad, is skipped with that line.",
    )
    add_db_option(record)
    record.add_argument("--out", type=Path, required=True, metavar="DIR", help="the directory to create")
    record.add_argument("--trace", action="append", default=[], metavar="ID", help="this trace (repeatable)")
    record.add_argument("--verdict", metavar="VERDICT", help="traces whose stored verdict is this, e.g. PASS")
    record.add_argument(
        "--where",
        metavar="SQL",
        help="a SQL predicate over the traces table, e.g. \"service_version = '1.0'\"",
    )
    record.add_argument("--service", metavar="NAME", help="traces of this service.name")
    record.add_argument("--version", metavar="V", help="traces of this service.version")
    record.add_argument(
        "--sample",
        type=int_range(1, 1_000_000),
        metavar="N",
        help="at most N of the matches, chosen by trace id",
    )
    record.add_argument(
        "--tools",
        type=Path,
        metavar="FILE",
        help=(
            "tool definitions (JSON: OpenAI, Anthropic, MCP, Bedrock Converse or Gemini format) "
            "for tools the traces record no definition of"
        ),
    )
    record.add_argument("--prefix", default="tr", metavar="P", help="case id prefix: P-d2-001 (default tr)")
    record.add_argument(
        "--skip-bad", action="store_true", help="skip traces that cannot be a case, one line each"
    )
    record.set_defaults(handler=run_from_traces)


def run_from_traces(args: argparse.Namespace) -> int:
    from traceladder.store.recorded import Selection
    from traceladder.workflows.from_traces import FromTracesRequest, record_suite

    selection = Selection(
        tuple(args.trace), args.verdict, args.where, args.service, args.version, args.sample
    )
    request = FromTracesRequest(selection, args.out, args.prefix, args.skip_bad, args.tools)
    outcome = record_suite(db_path(args), request, say=lambda line: print(line, file=sys.stderr))
    dims = ", ".join(f"{d} {n}" for d, n in sorted(outcome.per_dimension.items()))
    print(
        f"recorded {outcome.cases} cases ({dims}), {outcome.tools} tools, {outcome.results} recorded results"
        + (f"; skipped {len(outcome.skipped)} traces" if outcome.skipped else "")
    )
    print(f"out={outcome.out}")
    print(f"cases={outcome.out / 'cases.jsonl'}")
    return ExitCode.OK


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
