"""`traceladder sql "SELECT …"`: read-only SQL over spans, tool calls, results and findings."""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
import time
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from rich.table import Table
from rich.text import Text

from traceladder.cli.common import add_db_option, db_path, seconds, terminal
from traceladder.errors import ExitCode, UserError
from traceladder.store.db import open_store
from traceladder.store.query import QUERY_SURFACE, QueryResult, lock_down, run_query
from traceladder.text import printable

# The table view is for reading: at most this many rows, each cell cut to CELL_CHARS characters
# (a span's attributes can be megabytes); --csv / --json stream every row, every character.
TABLE_ROWS = 200
CELL_CHARS = 200
FOLDED_COLUMNS = 6  # more columns than this: one line per row
TABLE_FETCH_ROWS = 50  # rows fetched at a time for the table: its memory is bounded by what it shows
DEFAULT_TIMEOUT_S = 300.0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "sql",
        help="run a read-only SQL query over the store",
        description="Read-only SQL over the store. Tables and views: "
        + ", ".join(QUERY_SURFACE)
        + ". See docs/data-model.md. The store cannot be changed and no file can be read or written, "
        "except the files given with --file, which are loaded as tables first.",
    )
    add_db_option(p)
    p.add_argument("query", help='one SQL statement, e.g. "SELECT code, count(*) FROM failures GROUP BY 1"')
    p.add_argument(
        "--file",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="load a local .csv/.tsv/.parquet/.json/.jsonl file as table NAME (repeatable)",
    )
    p.add_argument(
        "--timeout",
        type=seconds(),
        default=DEFAULT_TIMEOUT_S,
        metavar="S",
        help=f"stop the query after S seconds of work, with exit 2 (default {DEFAULT_TIMEOUT_S:g}; "
        "the table view's rendering counts, time the output's reader takes does not)",
    )
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--csv", action="store_true", help="print CSV")
    fmt.add_argument("--json", action="store_true", help="print a JSON array of objects")
    p.set_defaults(handler=handle)


def _plain(value: Any) -> Any:
    """A JSON/CSV-friendly value: decimals as numbers, no NaN or Infinity (not JSON; null instead),
    dates as ISO text, bytes as hex."""
    if isinstance(value, Decimal):  # DECIMAL columns (e.g. `1.5`, `avg()` of decimals): JSON numbers
        value = float(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _files(specs: list[str]) -> dict[str, Path]:
    files = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise UserError(f"--file takes NAME=PATH, got {spec!r}")
        files[name] = Path(path)
    return files


def _note(text: str) -> None:
    print(f"traceladder: sql: {printable(text)}", file=sys.stderr, flush=True)


def handle(args: argparse.Namespace) -> int:
    with open_store(db_path(args), read_only=True, say=_note) as store:
        lock_down(store, _files(args.file))
        started = time.monotonic()
        table = not (args.csv or args.json)
        result = run_query(
            store, args.query, timeout_s=args.timeout, fetch_rows=TABLE_FETCH_ROWS if table else None
        )
        if args.csv:
            writer = csv.writer(sys.stdout, lineterminator="\n")
            writer.writerow(result.columns)
            for chunk in result.rows:
                writer.writerows([[_plain(v) for v in row] for row in chunk])
        elif args.json:
            _json(result)
        else:
            _table(result, deadline=started + args.timeout if args.timeout else None)
    return ExitCode.OK


def _json(result: QueryResult) -> None:
    encode = json.JSONEncoder(ensure_ascii=False, default=str, allow_nan=False).encode
    sys.stdout.write("[")
    first = True
    for chunk in result.rows:
        for row in chunk:
            sys.stdout.write(
                ("\n" if first else ",\n") + encode(dict(zip(result.columns, map(_plain, row), strict=True)))
            )
            first = False
    sys.stdout.write("\n]\n" if not first else "]\n")


def _cell(value: Any) -> Text:
    """One cell of the table view: at most `CELL_CHARS` characters, saying how many were cut.
    Text(), not str: data must never be read as rich markup, nor reach the terminal raw."""
    if value is None:
        return Text("NULL")
    text = str(_plain(value))
    if len(text) > CELL_CHARS:
        text = text[:CELL_CHARS] + f"… (+{len(text) - CELL_CHARS:,} characters; --csv or --json for all)"
    return Text(printable(text))


def _table(result: QueryResult, deadline: float | None = None) -> None:
    """At most `TABLE_ROWS` rows of cut cells; building and printing the table count against the
    `--timeout` (`deadline`), like the query."""
    table = Table(show_lines=False)
    # A few columns wrap their (cut) cells; many columns (`SELECT *`) get one line per row, each
    # cell cut to its column's width — what a terminal can show.
    wide = len(result.columns) > FOLDED_COLUMNS
    for column in result.columns:
        table.add_column(Text(printable(column)), overflow="ellipsis" if wide else "fold", no_wrap=wide)
    shown, more = 0, False
    for chunk in result.rows:
        for row in chunk:
            if shown == TABLE_ROWS:
                more = True
                break
            table.add_row(*(_cell(v) for v in row))
            shown += 1
            if deadline is not None and time.monotonic() > deadline:
                raise UserError("query interrupted after its --timeout while rendering the table; try --csv")
        if more:
            break
    console = terminal(min_width=160)
    console.print(table)
    if more:
        console.print(f"first {TABLE_ROWS} row(s) shown; use --csv or --json for all of them")
    else:
        console.print(f"{shown} row(s)")
