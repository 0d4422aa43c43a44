"""Options shared by several commands."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

DEFAULT_DB = "traceladder.duckdb"


def add_db_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db",
        default=None,
        metavar="PATH",
        help=f"DuckDB span store (default: $TRACELADDER_DB or ./{DEFAULT_DB})",
    )


def db_path(args: argparse.Namespace) -> Path:
    return Path(args.db or os.environ.get("TRACELADDER_DB") or DEFAULT_DB)
