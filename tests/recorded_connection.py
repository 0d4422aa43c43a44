"""`RecordedConnection`: a store's real DuckDB connection, wrapped so that every statement still
goes through to it unchanged and its text is kept — for tests that count what a command asks
DuckDB (`tests/reporting/test_report_queries.py`, `tests/conversation/test_conversation_pass_reads.py`)."""

from __future__ import annotations

from typing import Any

import duckdb


class RecordedConnection:
    """A DuckDB connection that keeps the text of every statement it is given."""

    def __init__(self, conn: duckdb.DuckDBPyConnection) -> None:
        self._conn = conn
        self.statements: list[str] = []

    def execute(self, sql: str, *args: Any, **kwargs: Any) -> Any:
        self.statements.append(sql)
        return self._conn.execute(sql, *args, **kwargs)

    def sql(self, sql: str, *args: Any, **kwargs: Any) -> Any:
        self.statements.append(sql)
        return self._conn.sql(sql, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)
