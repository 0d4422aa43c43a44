"""Options and argument types shared by several commands.

Argument types reject bad values at parse time (exit 2 with a one-line reason): a timeout of
0, -5 or nan, a negative delay, an absurd repeat count or an empty run id is a typo, never a
setting to run with.
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from traceladder.evaluate.assemble import LiveOptions
    from traceladder.evaluate.rungs.ladder import Ladder

DEFAULT_DB = "traceladder.duckdb"


def add_db_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db",
        default=None,
        metavar="PATH",
        help=f"DuckDB span store (default: $TRACELADDER_DB or ./{DEFAULT_DB})",
    )


def db_path(args: argparse.Namespace) -> Path:
    """The store's path (--db, $TRACELADDER_DB, the default), refused at once when it exists and is
    not a regular file: DuckDB would block forever opening a FIFO, and a command should not run
    for minutes (`run`) before it finds out. A missing path is each command's own decision."""
    from traceladder.store.store_file import check_store_path

    path = Path(args.db or os.environ.get("TRACELADDER_DB") or DEFAULT_DB)
    check_store_path(path)
    return path


def int_range(low: int, high: int) -> Callable[[str], int]:
    """An integer in [low, high]."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is outside {low}..{high}")
        return value

    return parse


def seconds(*, allow_zero: bool = False, high: float = 86_400.0) -> Callable[[str], float]:
    """A finite number of seconds: > 0 (or >= 0 with `allow_zero`), at most `high`."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
        if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero) or value > high:
            bound = ">= 0" if allow_zero else "> 0"
            raise argparse.ArgumentTypeError(
                f"{text!r} must be a finite number of seconds {bound}, at most {high:g}"
            )
        return value

    return parse


def run_id_arg(text: str) -> str:
    """A run id: not empty (an empty --run must not silently mean "the latest run")."""
    if not text.strip():
        raise argparse.ArgumentTypeError("a run id cannot be empty")
    return text


def terminal(min_width: int = 0) -> Console:
    """`cli.console.terminal`: rich is imported by the commands that print a table, on first use."""
    from traceladder.cli.console import terminal as make

    return make(min_width)


def add_domain_option(parser: argparse.ArgumentParser, help_text: str | None = None) -> None:
    parser.add_argument(
        "--domain",
        default=None,
        metavar="NAME|DIR",
        help=help_text
        or "tool domain: an installed one's name (default: retail; `traceladder domain list`) or a "
        "declarative domain directory (a path, or dir:PATH; docs/your-own-agent.md)",
    )


def domain_name(args: argparse.Namespace) -> str:
    from traceladder.suite.domain.registry import DEFAULT_DOMAIN

    return str(args.domain or DEFAULT_DOMAIN)


def sample_rate(text: str) -> float:
    from traceladder.sampling import parse_rate

    try:
        return parse_rate(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_live_options(parser: argparse.ArgumentParser) -> None:
    """The open-path inputs for traces with no case, and sampling (evaluate, watch)."""
    parser.add_argument(
        "--tools",
        type=Path,
        metavar="FILE",
        help=(
            "tool definitions (JSON: OpenAI, Anthropic, MCP, Bedrock Converse or Gemini format) "
            "for rung 1 on traces that captured none"
        ),
    )
    parser.add_argument(
        "--policy", type=Path, metavar="FILE", help="invariant policy (TOML; see docs/invariants.md)"
    )
    parser.add_argument(
        "--sample",
        type=sample_rate,
        default=1.0,
        metavar="RATE",
        help="judge this fraction of traces, chosen by trace id as OpenTelemetry's TraceIdRatioBased "
        "sampler does (the same traces on every rerun and machine); default 1",
    )
    parser.add_argument(
        "--keep-errors",
        action="store_true",
        help="with --sample: also judge every trace with an error status (weighted so rates stay unbiased)",
    )


def live_options(args: argparse.Namespace) -> LiveOptions:
    from traceladder.evaluate.assemble import LiveOptions
    from traceladder.evaluate.trace_schemas import load_tools_file
    from traceladder.sampling import Sampling

    policies = None
    if args.policy:
        from traceladder.evaluate.policy_file import load_policy

        policies = load_policy(args.policy)
    return LiveOptions(
        tools=load_tools_file(args.tools) if args.tools else None,
        policies=policies,
        sampling=Sampling(args.sample, args.keep_errors),
    )


def rung_names(text: str) -> tuple[str, ...]:
    """`--rungs NAME,...`: plug-in rung names; an empty value names none (overriding the file)."""
    names = tuple(n.strip() for n in text.split(","))
    if names == ("",):
        return ()
    if not all(names):
        raise argparse.ArgumentTypeError(f"{text!r}: give rung names separated by commas, e.g. step_budget")
    return names


def add_rungs_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--rungs",
        type=rung_names,
        default=None,
        metavar="NAME,...",
        help="installed plug-in rungs to add to the built-in ones (default: [evaluation] rungs in "
        "./traceladder.toml, else none: an installed plug-in never runs unless named; '' names none)",
    )


def ladder_for(args: argparse.Namespace) -> Ladder:
    """The ladder these arguments ask for: the built-in rungs plus the plug-ins `--rungs` names,
    else those the project's traceladder.toml names. An unknown name is a `UserError`."""
    from traceladder.evaluate.rungs.ladder import load_ladder
    from traceladder.project_config import load_project_config

    names = args.rungs if args.rungs is not None else load_project_config().rungs
    return load_ladder(names)
