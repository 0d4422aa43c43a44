"""Ad-hoc SQL over the store, read-only — enforced by DuckDB, not by guessing statement types.

A list of "reading" statement types cannot win: `EXPLAIN ANALYZE COPY … TO`, `IMPORT DATABASE`
(its schema.sql holds a COPY) and `SET log_query_path` all write files while looking harmless.
So the connection is opened read-only (no table can change), then DuckDB's own controls are set
and locked: `enable_external_access = false` (no file, network or extension access of any kind)
and `lock_configuration = true` (no `SET` can undo it). Local files a user wants to join with are
read *before* the lock, into temporary tables (`--file NAME=PATH`), so no path stays reachable.

A query has a time budget (`QueryBudget`): a recursive CTE without an end would otherwise run
until killed. A timer thread calls DuckDB's `interrupt()` when the budget is spent; DuckDB checks
for it between chunks of work, so the query stops within moments of it.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from traceladder.errors import UserError, first_line
from traceladder.store.db import Store

QUERY_SURFACE = (
    "spans",
    "log_records",
    "tool_calls",
    "tool_definitions",
    "traces",
    "runs",
    "case_runs",
    "trace_results",
    "rung_results",
    "findings",
    "results",
    "failures",
    "case_results",
    "trend_traces",
    "trend_by_version",
    "trend_by_hour",
    "trend_by_day",
)
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
_READERS = {
    ".csv": "read_csv",
    ".tsv": "read_csv",
    ".parquet": "read_parquet",
    ".json": "read_json",
    ".jsonl": "read_json",
    ".ndjson": "read_json",
}
FETCH_ROWS = 1_000  # rows per fetch: results stream, so a huge result never sits in memory


@dataclass(frozen=True)
class QueryResult:
    columns: list[str]
    rows: Iterator[list[tuple[Any, ...]]]  # chunks of rows, in order


def _reader(path: Path) -> str:
    suffixes = [s.lower() for s in path.suffixes if s.lower() != ".gz"]
    reader = _READERS.get(suffixes[-1] if suffixes else "")
    if reader is None:
        raise UserError(
            f"--file {path}: unknown format; use .csv, .tsv, .parquet, .json or .jsonl (optionally .gz)"
        )
    return reader


def lock_down(store: Store, files: Mapping[str, Path] | None = None) -> None:
    """Load `files` as temporary tables, then switch off every file access and lock the settings.
    After this the connection can read the store and those tables, and nothing else."""
    if not store.read_only:
        raise ValueError("lock_down needs a read-only store")
    for name, path in (files or {}).items():
        if not _NAME.match(name) or name.lower() in QUERY_SURFACE:
            raise UserError(f"--file {name}=…: the name must be an identifier that is not one of our tables")
        if not path.is_file():
            raise UserError(f"--file {name}={path}: no such file")
        try:
            store.execute(f'CREATE TEMP TABLE "{name}" AS SELECT * FROM {_reader(path)}(?)', [str(path)])
        except duckdb.Error as exc:
            raise UserError(f"--file {name}={path}: cannot read it: {first_line(exc)}") from None
    store.execute("SET enable_external_access = false")
    store.execute("SET lock_configuration = true")


class QueryBudget:
    """Seconds of DuckDB work one query may take (None: no limit), counted only while DuckDB runs
    (executing, fetching the next chunk), not while the output's reader is slow to take rows.

    `running()` arms a timer for what is left; when it fires, the connection's query is
    interrupted and the call raises `UserError` ("query interrupted after S s (--timeout)").
    """

    def __init__(self, conn: duckdb.DuckDBPyConnection, seconds: float | None) -> None:
        self.conn = conn
        self.seconds = seconds
        self.left = seconds
        self.expired = False

    def error(self) -> UserError:
        return UserError(f"query interrupted after {self.seconds:g} s (--timeout)")

    def _interrupt(self) -> None:
        self.expired = True
        self.conn.interrupt()  # thread-safe; never take the store's lock here (the query holds it)

    @contextmanager
    def running(self) -> Iterator[None]:
        if self.left is None:
            yield
            return
        if self.left <= 0:
            raise self.error()
        timer = threading.Timer(self.left, self._interrupt)
        timer.daemon = True
        started = time.monotonic()
        timer.start()
        try:
            yield
        except duckdb.InterruptException:
            if self.expired:
                raise self.error() from None
            raise
        finally:
            timer.cancel()
            self.left -= time.monotonic() - started
            if self.expired:  # fired as the call returned: the budget is spent all the same
                self.left = 0.0


def run_query(
    store: Store, sql: str, *, timeout_s: float | None = None, fetch_rows: int | None = None
) -> QueryResult:
    """Run one statement on a locked-down connection; `UserError` with one line on any error,
    and when the query's DuckDB time passes `timeout_s` (see `QueryBudget`).

    Rows come back in chunks of `fetch_rows` (default `FETCH_ROWS`) as the caller consumes them:
    a caller that shows a few rows of wide ones asks for small chunks.
    """
    size = fetch_rows or FETCH_ROWS
    try:
        statements = store.conn.extract_statements(sql)
    except duckdb.Error as exc:
        raise UserError(f"SQL error: {first_line(exc)}") from None
    if len(statements) != 1:
        raise UserError(f"run one statement at a time (got {len(statements)})")
    budget = QueryBudget(store.conn, timeout_s)
    try:
        with store.lock, budget.running():
            cursor = store.conn.execute(sql)
            columns = [d[0] for d in cursor.description or []]
            first = cursor.fetchmany(size) if cursor.description else []
    except duckdb.Error as exc:
        raise _refusal(exc) from None

    def chunks() -> Iterator[list[tuple[Any, ...]]]:
        chunk = first
        while chunk:
            yield chunk
            if len(chunk) < size:
                return
            try:
                with store.lock, budget.running():
                    chunk = cursor.fetchmany(size)
            except duckdb.Error as exc:
                raise UserError(f"SQL error while reading results: {first_line(exc)}") from None

    return QueryResult(columns, chunks())


def _refusal(exc: duckdb.Error) -> UserError:
    text = first_line(exc)
    if (
        isinstance(exc, duckdb.PermissionException)
        or "read-only mode" in text
        or "configuration has been locked" in text
    ):
        return UserError(f"refused: `traceladder sql` is read-only ({text})")
    return UserError(f"SQL error: {text}")
