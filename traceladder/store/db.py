"""The DuckDB span store: one connection per process, serialised by a lock, migrated on open.

DuckDB allows one writing process per file. Opening a file another process holds gives a one-line
`StoreBusy` that says so and what to do, never a lock traceback. Every other reason a file cannot
serve as our store is a `StoreError`: not a regular file (a FIFO would block the open forever), a
file cut short (`store_file.py`), another program's database (we never add our tables to it), a
store from a newer traceladder, a damaged migration record, a corrupt or unwritable file.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from traceladder.errors import StoreBusy, StoreError, first_line
from traceladder.store.compression import compress_spans
from traceladder.store.migrations import MIGRATIONS
from traceladder.store.store_file import blocks_past_end, check_blocks_present, check_store_path, damaged

if TYPE_CHECKING:  # Arrow is imported where a table is built: reading commands need none at start-up
    import pyarrow as pa

log = logging.getLogger(__name__)

KNOWN_MIGRATIONS = tuple(name for name, _ in MIGRATIONS)
DEFAULT_LOCK_WAIT_S = 30.0
# Checkpoint less often than DuckDB's 16 MB default: span batches are large, and each checkpoint
# rewrites row groups (measured: +27% write throughput at 64 MB). The WAL keeps every committed
# batch durable in between.
CHECKPOINT_BYTES = 64 << 20

_HOLDER = re.compile(r"PID (\d+)")
# Runs this process is executing right now. DuckDB lets one process open a file several times, so
# "still running" only proves a dead process for runs that are not ours.
ACTIVE_RUNS: set[str] = set()


class Store:
    """A migrated DuckDB file. All access goes through `lock`; use one `Store` per process."""

    def __init__(self, path: Path, *, read_only: bool = False, lock_timeout: float | None = None) -> None:
        self.path = Path(path)
        self.read_only = read_only
        # Migrations this file lacks: only a reader can see any (a writer applies them on open).
        self.missing_migrations: tuple[str, ...] = ()
        self.lock = threading.RLock()
        # The caps `memory_limit` set, innermost last: each is restored from what was asked, not
        # from DuckDB's rounded text of it (which restored 0.1 GiB lower every time, decision 595).
        self._caps: list[tuple[str, int | None]] = []
        check_store_path(self.path)
        if read_only and not self.path.exists():
            raise StoreError(f"no store at {self.path}; run `traceladder run` first or pass --db")
        past_end = blocks_past_end(self.path)
        try:
            self.conn = _connect(self.path, read_only, lock_wait() if lock_timeout is None else lock_timeout)
        except StoreBusy:
            raise
        except StoreError:  # DuckDB could not even read its catalog: it lay past the end
            if past_end:
                raise StoreError(damaged(self.path, f"{past_end:,} of its blocks are missing")) from None
            raise
        try:
            if past_end:
                check_blocks_present(self.conn, self.path)
            self._open()
        except duckdb.Error as exc:
            self.conn.close()
            raise StoreError(f"cannot use the store {self.path}: {first_line(exc)}") from None
        except StoreError:
            self.conn.close()
            raise

    def _open(self) -> None:
        applied = self._check_identity()
        if self.read_only:
            self.missing_migrations = tuple(m for m in KNOWN_MIGRATIONS if m not in applied)
            return
        self.conn.execute(f"SET checkpoint_threshold = '{CHECKPOINT_BYTES}B'")
        self._migrate(applied)
        with self.lock:
            compress_spans(self.conn)  # once per store: its wide JSON columns with zstd
        # Only one process can hold the file for writing, so a run still marked running
        # belongs to a process that died (Ctrl-C handled elsewhere; this is kill -9).
        self.execute(
            "UPDATE runs SET status = 'interrupted'"
            " WHERE status = 'running' AND NOT list_contains(?, run_id)",
            [sorted(ACTIVE_RUNS)],
        )

    def _check_identity(self) -> set[str]:
        """The applied migrations, after refusing files that are not (or not yet) our store.

        The migrations table is read first and the catalog listed only when it is missing: every
        command opens the store, and listing the catalog costs ~15 ms of a command's start-up
        where reading one table costs ~2 ms (measured)."""
        try:
            applied = {r[0] for r in self.fetchall("SELECT name FROM schema_migrations")}
        except (duckdb.CatalogException, duckdb.BinderException):  # no such table; not our columns
            self._refuse_foreign()
            return set()
        unknown = sorted(applied - set(KNOWN_MIGRATIONS))
        if unknown:
            raise StoreError(
                f"{self.path} was written by a newer traceladder (migration {unknown[0]}); "
                "upgrade traceladder to use it"
            )
        return applied

    def _refuse_foreign(self) -> None:
        """A file without our migrations table is ours to create only when it is empty and writable
        (another program's `schema_migrations`, with its own columns, is not ours either)."""
        tables = self.tables()
        if tables:
            shown = ", ".join(sorted(tables)[:5])
            raise StoreError(
                f"{self.path} is a DuckDB file of another program (tables: {shown}); traceladder "
                "will not add its tables to it — pass --db with a new file or a traceladder store"
            )
        if self.read_only:
            raise StoreError(f"{self.path} is an empty DuckDB file, not a traceladder store; pass --db")

    # -- plumbing ----------------------------------------------------------------------------

    def execute(self, sql: str, params: Any = None) -> duckdb.DuckDBPyConnection:
        with self.lock:
            return self.conn.execute(sql, params)

    def fetchall(self, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
        with self.lock:
            return self.conn.execute(sql, params).fetchall()

    @contextmanager
    def registered(self, name: str, table: pa.Table) -> Iterator[duckdb.DuckDBPyConnection]:
        """The connection, under the store's lock, with `table` queryable as `name` meanwhile: how a
        set of ids or rows reaches one set-based query instead of one query per item."""
        with self.lock:
            self.conn.register(name, table)
            try:
                yield self.conn
            finally:
                self.conn.unregister(name)

    @contextmanager
    def memory_limit(self, limit: str, *, threads: int | None = None) -> Iterator[None]:
        """DuckDB's memory limit set to `limit` (a size such as "256MB") meanwhile, then restored:
        a long bulk pass spills and evicts cached blocks instead of growing with the file
        (decision 101). Not for an in-memory store: its tables live in that memory. `threads`
        also caps DuckDB's threads meanwhile: each thread keeps buffers of its own, so under a
        small cap one thread fits a query two do not (decision 240)."""
        if str(self.path) == ":memory:":
            yield
            return
        with self.lock:
            outer = self._caps[-1] if self._caps else None
            cap = self._set_caps(limit, threads, outer)
        try:
            yield
        finally:
            with self.lock:
                self._caps.remove(cap)
                # an outer cap comes back as it was asked for; DuckDB's defaults by RESET. Threads
                # this cap left as they were need nothing back.
                limit_before, threads_before = outer or (None, None)
                self.conn.execute(
                    "RESET memory_limit" if limit_before is None else f"SET memory_limit = '{limit_before}'"
                )
                if threads is not None:
                    self.conn.execute(
                        "RESET threads" if threads_before is None else f"SET threads = {int(threads_before)}"
                    )

    def keep_memory_limit(self, limit: str, *, threads: int | None = None) -> None:
        """`memory_limit`'s caps for the rest of this store's life, never restored: for a command
        that opened the store for one bounded read and closes it after (asked before any
        `memory_limit`). A `memory_limit` inside comes back to these; closing the store restores
        nothing (two statements a report paid for a connection about to end, decision 762)."""
        if str(self.path) == ":memory:":
            return
        with self.lock:
            self._set_caps(limit, threads, self._caps[-1] if self._caps else None)

    def _set_caps(
        self, limit: str, threads: int | None, outer: tuple[str, int | None] | None
    ) -> tuple[str, int | None]:
        """Set DuckDB's memory limit (and threads, when given) and record the cap, innermost last."""
        self.conn.execute(f"SET memory_limit = '{limit}'")
        if threads is not None:
            self.conn.execute(f"SET threads = {int(threads)}")
        cap = (limit, threads if threads is not None else outer and outer[1])
        self._caps.append(cap)
        return cap

    @contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        with self.lock:
            self.conn.execute("BEGIN TRANSACTION")
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            try:
                self.conn.execute("COMMIT")
            except duckdb.Error:  # a commit that could not be written (a full disk) ends nothing
                with suppress(duckdb.Error):
                    self.conn.execute("ROLLBACK")
                raise

    def tables(self) -> set[str]:
        """The names of the file's tables and views (ours or another program's). DuckDB's own
        catalog functions, not information_schema: the same names at a third of the cost, and
        every command pays it on opening the store."""
        rows = self.fetchall(
            "SELECT table_name FROM duckdb_tables()"
            " UNION ALL SELECT view_name FROM duckdb_views() WHERE NOT internal"
        )
        return {r[0] for r in rows}

    def close(self) -> None:
        with self.lock:
            self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- schema ------------------------------------------------------------------------------

    def _migrate(self, applied: set[str]) -> None:
        with self.transaction() as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations "
                "(name VARCHAR PRIMARY KEY, applied_at TIMESTAMP DEFAULT current_timestamp)"
            )
            for name, sql in MIGRATIONS:
                if name in applied:
                    continue
                try:
                    conn.execute(sql)
                except duckdb.CatalogException as exc:
                    raise StoreError(
                        f"the store {self.path} is damaged: migration {name} is not recorded but its "
                        f"objects exist ({first_line(exc)}); restore it from a copy or start a new --db"
                    ) from None
                conn.execute("INSERT INTO schema_migrations (name) VALUES (?)", [name])

    def applied_migrations(self) -> list[str]:
        return [r[0] for r in self.fetchall("SELECT name FROM schema_migrations ORDER BY name")]


def lock_wait() -> float:
    """Seconds to wait for another process's hold on the store (`TRACELADDER_LOCK_TIMEOUT`)."""
    raw = os.environ.get("TRACELADDER_LOCK_TIMEOUT", "")
    try:
        return max(0.0, float(raw)) if raw.strip() else DEFAULT_LOCK_WAIT_S
    except ValueError:
        return DEFAULT_LOCK_WAIT_S


def _connect(path: Path, read_only: bool, wait_s: float) -> duckdb.DuckDBPyConnection:
    """Open the file, waiting up to `wait_s` while another process holds it: commands that share a
    store (a receiver folding segments, `sql` next to `evaluate`) hold it briefly and take turns."""
    deadline = time.monotonic() + wait_s
    pause = 0.01
    while True:
        try:
            conn = duckdb.connect(str(path), read_only=read_only)
        except duckdb.IOException as exc:
            # the last try is at the deadline, not a pause before it: "waited 1s" means a second
            left = deadline - time.monotonic()
            if "lock" not in str(exc).lower() or left <= 0:
                raise _open_error(path, exc) from None
            pause = min(pause, left)
        except duckdb.Error as exc:
            raise StoreError(f"cannot open {path} as a DuckDB store: {first_line(exc)}") from None
        else:
            # No progress bar: on a slow query DuckDB draws one on the terminal, which lands in
            # the output a caller (a script, a test, a pipe) parses. (A session setting: the
            # connect-time config takes only global ones.)
            conn.execute("SET enable_progress_bar = false")
            return conn
        time.sleep(pause)
        pause = min(pause * 2, 0.25)


def _open_error(path: Path, exc: duckdb.IOException) -> StoreError:
    text = str(exc)
    if "lock" in text.lower():
        holder = _HOLDER.search(text)
        who = f"process {holder.group(1)}" if holder else "another process"
        return StoreBusy(
            f"the store {path} is in use by {who} (DuckDB allows one writer per file); "
            f"waited {lock_wait():g}s (TRACELADDER_LOCK_TIMEOUT); wait for it to finish, or pass --db "
            "with another file"
        )
    return StoreError(f"cannot open {path}: {first_line(exc)}")


def open_store(
    path: Path,
    *,
    read_only: bool = False,
    say: Callable[[str], None] = log.warning,
    stale_notice: bool = True,
) -> Store:
    """Open the store with what a receiver acknowledged, so every command sees every span
    acknowledged before it started. A writer folds the pending segments in (a fold that cannot
    run is the writer's error: it could not write either). A reader never writes: it lays them
    over the file it opened read-only (`store.overlay`), and says once through `say` about a
    segment it could not show.
    A store holding rows of an older extraction says so once (`stale_notice`), and a store whose
    schema an older traceladder wrote says, once, that a reader does not upgrade it."""
    store = _open(path, read_only, say)
    if store.missing_migrations:  # one line: the command it names also rebuilds stale rows
        _say_behind(store, say)
    elif stale_notice:
        _say_if_stale(store, say)
    return store


_TOLD_BEHIND: set[str] = set()


def _say_behind(store: Store, say: Callable[[str], None]) -> None:
    """Once per store and process: an older traceladder wrote this file, and reading it does not
    upgrade it (read-only commands never write), so a table or column a newer command reads may
    be missing. A command that writes applies the migrations on opening."""
    if str(store.path) in _TOLD_BEHIND:
        return
    _TOLD_BEHIND.add(str(store.path))
    missing = store.missing_migrations
    more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
    say(
        f"{store.path} was written by an older traceladder (it lacks migration {missing[0]}{more}); "
        "reading does not upgrade it, and a command may fail on what is missing: "
        f"run `traceladder reindex --db {store.path}` to upgrade it and rebuild what an older "
        "extraction derived"
    )


def _say_if_stale(store: Store, say: Callable[[str], None]) -> None:
    # The stage's version and stamp rule only (a module of constants): reading commands must not
    # load the conventions to open a store.
    from traceladder.extract.version import EXTRACTION_VERSION, conventions_stamp
    from traceladder.store.settings import say_if_stale

    try:
        say_if_stale(store, EXTRACTION_VERSION, conventions_stamp, say)
    except BaseException:
        store.close()
        raise


def _open(path: Path, read_only: bool, say: Callable[[str], None]) -> Store:
    from traceladder.store.segments import has_pending

    if read_only:
        return _open_reader(Path(path), say)
    store = Store(path, read_only=read_only)
    if has_pending(path):
        from traceladder.store.fold import fold_pending  # fold writes through this module (and Arrow)

        try:
            fold_pending(store, say=say)
        except BaseException:
            store.close()
            raise
    return store


def _open_reader(path: Path, say: Callable[[str], None]) -> Store:
    from traceladder.store.segments import has_pending

    store = Store(path, read_only=True)
    if not has_pending(path):
        return store
    from traceladder.store.overlay import overlay_pending, say_unshown  # Arrow, the stage

    try:
        say_unshown(overlay_pending(store), say)
    except BaseException:
        store.close()
        raise
    return store


def trace_id_table(trace_ids: Iterable[str] | pa.Array | pa.ChunkedArray) -> pa.Table:
    """A one-column `trace_id` table, to register for a set-based query."""
    import pyarrow as pa

    if isinstance(trace_ids, pa.Array | pa.ChunkedArray):  # already Arrow: no copy through Python
        return pa.table({"trace_id": trace_ids.cast(pa.string())})
    return pa.table({"trace_id": pa.array(list(trace_ids), pa.string())})
