"""`traceladder sql "SELECT …"`: read-only SQL over spans, tool calls, results and findings."""

from __future__ import annotations

import argparse
import csv
import json
import sys
from datetime import date, datetime
from typing import Any

from rich.console import Console
from rich.table import Table

from traceladder.cli.common import add_db_option, db_path
from traceladder.storage.db import Store
from traceladder.storage.query import QUERY_SURFACE, QueryResult, run_query


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "sql",
        help="run a read-only SQL query over the store",
        description="Read-only SQL over the store. Tables and views: "
        + ", ".join(QUERY_SURFACE)
        + ". See docs/data-model.md. Write statements are refused.",
    )
    add_db_option(p)
    p.add_argument("query", help='one SQL statement, e.g. "SELECT code, count(*) FROM failures GROUP BY 1"')
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--csv", action="store_true", help="print CSV")
    fmt.add_argument("--json", action="store_true", help="print a JSON array of objects")
    p.set_defaults(handler=handle)


def _plain(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.hex()
    return value


def handle(args: argparse.Namespace) -> int:
    with Store(db_path(args), read_only=True) as store:
        result = run_query(store, args.query)
    if args.csv:
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(result.columns)
        writer.writerows([[_plain(v) for v in row] for row in result.rows])
    elif args.json:
        objects = [dict(zip(result.columns, map(_plain, row), strict=True)) for row in result.rows]
        sys.stdout.write(json.dumps(objects, ensure_ascii=False, default=str, indent=1) + "\n")
    else:
        _table(result)
    return 0


def _table(result: QueryResult) -> None:
    table = Table(show_lines=False)
    for column in result.columns:
        table.add_column(column, overflow="fold")
    for row in result.rows:
        table.add_row(*("NULL" if v is None else str(_plain(v)) for v in row))
    console = Console(width=max(Console().width, 160))
    console.print(table)
    console.print(f"{len(result.rows)} row(s)")
