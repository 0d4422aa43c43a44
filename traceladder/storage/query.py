"""Ad-hoc SQL over the store: read-only, one statement at a time, writes refused up front."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import duckdb

from traceladder.errors import UserError
from traceladder.storage.db import Store

# Statement types that only read. Anything else is refused before it reaches the database (the
# read-only connection would refuse it too, but with DuckDB's wording).
READ_STATEMENTS = frozenset({"SELECT", "EXPLAIN", "PRAGMA", "SET", "VARIABLE_SET", "RELATION"})
QUERY_SURFACE = (
    "spans",
    "tool_calls",
    "runs",
    "case_runs",
    "results",
    "findings",
    "failures",
    "case_results",
)


@dataclass(frozen=True)
class QueryResult:
    columns: list[str]
    rows: list[tuple[Any, ...]]


def run_query(store: Store, sql: str) -> QueryResult:
    """Run one read-only statement; `UserError` with one line for writes and SQL errors."""
    try:
        statements = store.conn.extract_statements(sql)
    except duckdb.Error as exc:
        raise UserError(f"SQL error: {_first_line(exc)}") from None
    if len(statements) != 1:
        raise UserError(f"run one statement at a time (got {len(statements)})")
    kind = statements[0].type.name
    if kind not in READ_STATEMENTS:
        raise UserError(f"refused: `traceladder sql` is read-only and this is a {kind} statement")
    try:
        with store.lock:
            cursor = store.conn.execute(sql)
            columns = [d[0] for d in cursor.description or []]
            return QueryResult(columns, cursor.fetchall())
    except duckdb.Error as exc:
        raise UserError(f"SQL error: {_first_line(exc)}") from None


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0]
