"""What a reader sees of receiver segments nobody has folded yet, without writing a byte.

A read-only command must answer with every span a receiver acknowledged before it started, and
must never write the store (issue 30, point 3; docs/decisions.md 364 and 370). So a reader that
finds pending segments folds them into a scratch database of its own, in memory, and lays that
over the file it opened read-only:

1. `ATTACH ':memory:' AS <scratch>`, created by the store's own migrations, and seeded from the
   file with what the write path reads: every row of the pending traces in the per-trace tables
   (`PER_TRACE`), and whole the small cross-trace tables conversations are grouped from
   (`WHOLE`: one short row per trace or conversation) and the store's settings.
2. The segments are written into the scratch database by the one write path (`write_batch`,
   through `store.fold.write_isolated`): the extraction stage derives their rows exactly as a
   fold would. The calls a pending trace's history names may have been made in a stored trace
   (conversation linking): those stored calls are copied into the scratch database as the stage
   names them (`_LinkingStage`), before its rows are written.
3. TEMP views named as the tables shadow them: a per-trace table reads the file's rows of every
   other trace and the scratch rows of the pending traces; a whole table reads the scratch copy.
   TEMP objects come first in DuckDB's search path, so a command's SQL, `traceladder sql` and
   the file's own views (`trend_traces`, `case_results`, …, bound by name when queried) all read
   the overlay; the views read the file's tables by catalog name (`"<db>".main.spans`), since
   `main.spans` would resolve to the TEMP view itself.

Nothing touches the file or the segments: a segment the store would refuse is left where it is
(the next writer sets it aside) and said once. A file whose migrations are not all applied
(written by an older traceladder, not opened for writing since) is answered from what is folded:
only a writer migrates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from traceladder.store.db import KNOWN_MIGRATIONS, Store
from traceladder.store.derived import Batch, DerivedRows, Extraction
from traceladder.store.fold import FOLD_ROWS, already_folded, load, write_isolated
from traceladder.store.migrations import MIGRATIONS
from traceladder.store.segments import Segment, batches, pending, segment_root
from traceladder.store.writes import default_extraction

# Tables the write path rewrites a trace at a time: the overlay replaces the pending traces' rows.
PER_TRACE = ("spans", "log_records", "tool_calls", "tool_definitions", "trace_reading")
# Tables grouping conversations reads across traces: copied whole (short rows, one per trace).
WHOLE = ("traces", "conversation_keys", "prior_calls", "conversations", "store_settings")
SCRATCH = "traceladder_pending"


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class Overlaid:
    """What `overlay_pending` laid over the store: segments shown, and those it could not show."""

    def __init__(self) -> None:
        self.shown = 0
        self.unshown: list[tuple[Segment, str]] = []


class _LinkingStage:
    """The extraction stage, which also copies into the scratch database the stored calls the
    batch's histories may link to (`store.conversation_groups` links a trace's prior calls to
    calls of other traces by tool name): the write path then reads them as a fold would."""

    def __init__(self, stage: Extraction, conn: duckdb.DuckDBPyConnection, file_db: str) -> None:
        self.stage, self.conn, self.file_db = stage, conn, file_db

    def extract(self, batch: Batch, conventions: str) -> DerivedRows:
        derived = self.stage.extract(batch, conventions)
        if derived.prior is not None and derived.prior.num_rows:
            names = pc.unique(derived.prior.column("tool_name")).to_pylist()
            stored = f"{self.file_db}.main.tool_calls"
            self.conn.execute(
                f"INSERT INTO tool_calls BY NAME SELECT * FROM {stored} WHERE trace_id IN "
                f"(SELECT trace_id FROM {stored} WHERE list_contains($names, tool_name)) "
                "AND trace_id NOT IN (SELECT trace_id FROM tool_calls) "
                "AND trace_id NOT IN (SELECT trace_id FROM overlay_traces)",
                {"names": [n for n in names if n is not None]},
            )
        return derived


def _scratch_schema(conn: duckdb.DuckDBPyConnection, file_db: str) -> None:
    conn.execute(
        "CREATE TABLE schema_migrations "
        "(name VARCHAR PRIMARY KEY, applied_at TIMESTAMP DEFAULT current_timestamp)"
    )
    for _, sql in MIGRATIONS:
        conn.execute(sql)
    # Arrival numbers continue the file's, so a pending trace reads as the latest arrival.
    last = conn.execute(f"SELECT coalesce(max(seq), 0) FROM {file_db}.main.traces").fetchall()[0][0]
    conn.execute(f"CREATE OR REPLACE SEQUENCE trace_arrival_seq START WITH {int(last) + 1}")
    conn.execute("CREATE TABLE overlay_traces (trace_id VARCHAR NOT NULL PRIMARY KEY)")


def _seed(conn: duckdb.DuckDBPyConnection, file_db: str, trace_ids: pa.Array) -> None:
    conn.register("pending_trace_ids", pa.table({"trace_id": trace_ids}))
    try:
        conn.execute("INSERT INTO overlay_traces SELECT trace_id FROM pending_trace_ids")
    finally:
        conn.unregister("pending_trace_ids")
    for table in PER_TRACE:
        conn.execute(
            f"INSERT INTO {table} BY NAME SELECT * FROM {file_db}.main.{table} "
            "WHERE trace_id IN (SELECT trace_id FROM overlay_traces)"
        )
    for table in WHOLE:
        conn.execute(f"INSERT INTO {table} BY NAME SELECT * FROM {file_db}.main.{table}")


def _views(conn: duckdb.DuckDBPyConnection, file_db: str) -> None:
    scratch = f"{SCRATCH}.main"
    for table in PER_TRACE:
        mine = f"trace_id IN (SELECT trace_id FROM {scratch}.overlay_traces)"
        if table == "log_records":  # a record of no trace is one of its own: shown unless stored
            mine = (
                f"({mine} OR (trace_id IS NULL AND record_id NOT IN "
                f"(SELECT record_id FROM {file_db}.main.log_records WHERE trace_id IS NULL)))"
            )
        conn.execute(
            f"CREATE TEMP VIEW {table} AS SELECT * FROM {file_db}.main.{table} "
            f"WHERE trace_id IS NULL OR trace_id NOT IN (SELECT trace_id FROM {scratch}.overlay_traces) "
            f"UNION ALL BY NAME SELECT * FROM {scratch}.{table} WHERE {mine}"
        )
    for table in WHOLE:
        conn.execute(f"CREATE TEMP VIEW {table} AS SELECT * FROM {scratch}.{table}")


def _trace_ids(loaded: Sequence[pa.Table]) -> pa.Array:
    chunks = [c for t in loaded for c in t.column("trace_id").chunks]
    ids = pc.unique(pa.chunked_array(chunks, pa.string()))
    return ids.filter(pc.is_valid(ids))


def overlay_pending(store: Store) -> Overlaid:
    """Lay the store's pending segments over `store` (opened read-only), as the module docstring
    says; returns what was shown and what could not be (with why). Writes nothing."""
    out = Overlaid()
    segments = pending(segment_root(store.path))
    if not segments:
        return out
    if set(store.applied_migrations()) != set(KNOWN_MIGRATIONS):
        out.unshown = [(s, "the store needs migrating by a command that writes") for s in segments]
        return out
    done = already_folded(store, segments)
    todo = [s for s in segments if s.name not in done]

    def refuse(segment: Segment, reason: str) -> None:
        out.unshown.append((segment, reason))

    groups = [load(group, refuse) for group in batches(todo, FOLD_ROWS)]
    groups = [g for g in groups if g]
    if not groups:
        return out
    with store.lock:
        conn = store.conn
        file_db = _quoted(conn.execute("SELECT current_database()").fetchall()[0][0])
        conn.execute(f"ATTACH ':memory:' AS {SCRATCH} (READ_WRITE)")
        conn.execute(f"USE {SCRATCH}")
        try:
            _scratch_schema(conn, file_db)
            _seed(conn, file_db, _trace_ids([i.table for g in groups for i in g]))
            stage = _LinkingStage(default_extraction(), conn, file_db)
            for group in groups:
                written, _, _ = write_isolated(store, group, refuse, stage)
                out.shown += len(written)
        finally:
            conn.execute(f"USE {file_db}")
        _views(conn, file_db)
    return out


def say_unshown(overlaid: Overlaid, say: Callable[[str], None]) -> None:
    """One line for the segments a reader could not show (none: nothing said)."""
    if not overlaid.unshown:
        return
    n = len(overlaid.unshown)
    first, why = overlaid.unshown[0]
    what = "1 segment is" if n == 1 else f"{n} segments are"
    say(f"{what} pending and not shown ({first.name}: {why}); answering without {'it' if n == 1 else 'them'}")


__all__ = ["PER_TRACE", "WHOLE", "Overlaid", "overlay_pending", "say_unshown"]
