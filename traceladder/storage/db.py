"""The DuckDB span store: one connection per process, serialised by a lock, migrated on open.

DuckDB allows one writing process per file. Opening a file another process holds gives a one-line
`UserError` that says so and what to do, never a lock traceback.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

from traceladder.errors import UserError
from traceladder.storage.migrations import MIGRATIONS

_HOLDER = re.compile(r"PID (\d+)")
# Runs this process is executing right now. DuckDB lets one process open a file several times, so
# "still running" only proves a dead process for runs that are not ours.
ACTIVE_RUNS: set[str] = set()


class Store:
    """A migrated DuckDB file. All access goes through `lock`; use one `Store` per process."""

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self.path = Path(path)
        self.read_only = read_only
        self.lock = threading.RLock()
        if read_only and not self.path.exists():
            raise UserError(f"no store at {self.path}; run `traceladder run` first or pass --db")
        try:
            self.conn = duckdb.connect(str(self.path), read_only=read_only)
        except duckdb.IOException as exc:
            raise _open_error(self.path, exc) from None
        except duckdb.Error as exc:
            raise UserError(f"cannot open {self.path} as a DuckDB store: {_first_line(exc)}") from None
        if read_only:
            if "schema_migrations" not in self.tables():
                raise UserError(f"{self.path} is not a traceladder store (no schema_migrations)")
        else:
            # Checkpoint less often than DuckDB's 16 MB default: span batches are large, and each
            # checkpoint rewrites row groups (measured: +27% write throughput at 64 MB). The WAL
            # keeps every committed batch durable in between.
            self.conn.execute("SET checkpoint_threshold = '64MB'")
            self._migrate()
            # Only one process can hold the file for writing, so a run still marked running
            # belongs to a process that died (Ctrl-C handled elsewhere; this is kill -9).
            self.execute(
                "UPDATE runs SET status = 'interrupted'"
                " WHERE status = 'running' AND NOT list_contains(?, run_id)",
                [sorted(ACTIVE_RUNS)],
            )

    # -- plumbing ----------------------------------------------------------------------------

    def execute(self, sql: str, params: Any = None) -> duckdb.DuckDBPyConnection:
        with self.lock:
            return self.conn.execute(sql, params)

    def fetchall(self, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
        with self.lock:
            return self.conn.execute(sql, params).fetchall()

    @contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        with self.lock:
            self.conn.execute("BEGIN TRANSACTION")
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    def tables(self) -> set[str]:
        rows = self.fetchall("SELECT table_name FROM information_schema.tables")
        return {r[0] for r in rows}

    def close(self) -> None:
        with self.lock:
            self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- schema ------------------------------------------------------------------------------

    def _migrate(self) -> None:
        with self.transaction() as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations "
                "(name VARCHAR PRIMARY KEY, applied_at TIMESTAMP DEFAULT current_timestamp)"
            )
            applied = {r[0] for r in conn.execute("SELECT name FROM schema_migrations").fetchall()}
            for name, sql in MIGRATIONS:
                if name not in applied:
                    conn.execute(sql)
                    conn.execute("INSERT INTO schema_migrations (name) VALUES (?)", [name])

    def applied_migrations(self) -> list[str]:
        return [r[0] for r in self.fetchall("SELECT name FROM schema_migrations ORDER BY name")]


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _open_error(path: Path, exc: duckdb.IOException) -> UserError:
    text = str(exc)
    if "lock" in text.lower():
        holder = _HOLDER.search(text)
        who = f"process {holder.group(1)}" if holder else "another process"
        return UserError(
            f"the store {path} is in use by {who} (DuckDB allows one writer per file); "
            "wait for it to finish, or pass --db with another file"
        )
    return UserError(f"cannot open {path}: {_first_line(exc)}")


def open_store(path: Path, *, read_only: bool = False) -> Store:
    return Store(path, read_only=read_only)
