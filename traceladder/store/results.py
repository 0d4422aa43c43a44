"""Result tables: their Arrow schemas and the one writer. Storage knows tables and Arrow — never
the ladder: the evaluation layer builds tables with these schemas and hands them over.

`write_results` replaces the results of exactly the traces it is given, in one transaction, as
Arrow batches (never row by row): re-evaluating replaces, never duplicates. An evaluation appends
batch by batch, a transaction each (`append_result_batches`, decision 100); a sharded one writes
all its shards in one (`write_result_batches`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from traceladder.store.db import Store

_S, _I, _F = pa.string(), pa.int32(), pa.float64()
TRACE_RESULT_SCHEMA = pa.schema(
    [
        ("trace_id", _S), ("run_id", _S), ("case_id", _S), ("repeat_index", _I), ("dimension", _S),
        ("domain", _S), ("verdict", _S), ("failure_class", _S), ("settled_at", _I), ("settled_by", _S),
        ("explanation", _S), ("evidence", _S), ("evaluator_version", _S),
        ("evaluated_at", pa.timestamp("us")), ("judged_seq", pa.int64()), ("sample_weight", _F),
        ("reason", _S),
    ]
)  # fmt: skip
RUNG_RESULT_SCHEMA = pa.schema(
    [
        ("trace_id", _S), ("rung", _I), ("rung_name", _S), ("status", _S), ("scores", pa.map_(_S, _F)),
        ("explanation", _S), ("evaluator_version", _S),
    ]
)  # fmt: skip
FINDING_SCHEMA = pa.schema(
    [
        ("run_id", _S), ("case_id", _S), ("repeat_index", _I), ("trace_id", _S), ("rung", _I), ("code", _S),
        ("tool", _S), ("param", _S), ("expected", _S), ("actual", _S), ("message", _S), ("ordinal", _I),
        ("evaluator_version", _S), ("rung_name", _S),
    ]
)  # fmt: skip


@dataclass(frozen=True)
class ResultTables:
    """One batch of judged traces: one row each, one row per (trace, rung), one per finding."""

    traces: pa.Table
    rungs: pa.Table
    findings: pa.Table

    @staticmethod
    def concat(parts: Sequence[ResultTables]) -> ResultTables:
        if not parts:
            return ResultTables(
                TRACE_RESULT_SCHEMA.empty_table(),
                RUNG_RESULT_SCHEMA.empty_table(),
                FINDING_SCHEMA.empty_table(),
            )
        return ResultTables(
            pa.concat_tables([p.traces for p in parts]),
            pa.concat_tables([p.rungs for p in parts]),
            pa.concat_tables([p.findings for p in parts]),
        )

    def only(self, trace_ids: pa.Array) -> ResultTables:
        """These tables' rows of `trace_ids` alone."""

        def keep(table: pa.Table) -> pa.Table:
            return table.filter(pc.is_in(table.column("trace_id"), value_set=trace_ids))

        return ResultTables(keep(self.traces), keep(self.rungs), keep(self.findings))

    def without(self, trace_ids: pa.Array) -> ResultTables:
        """These tables less the rows of `trace_ids` (replaced by a later pass)."""

        def keep(table: pa.Table) -> pa.Table:
            return table.filter(pc.invert(pc.is_in(table.column("trace_id"), value_set=trace_ids)))

        return ResultTables(keep(self.traces), keep(self.rungs), keep(self.findings))


_TABLES = (
    ("trace_results", TRACE_RESULT_SCHEMA),
    ("rung_results", RUNG_RESULT_SCHEMA),
    ("findings", FINDING_SCHEMA),
)


def write_results(store: Store, tables: ResultTables) -> None:
    """Replace the results of the traces in `tables.traces` with these rows, in one transaction."""
    write_result_batches(store, [tables])


def append_result_batches(
    store: Store,
    batches: Iterable[tuple[ResultTables, bool]],
    each: Callable[[duckdb.DuckDBPyConnection, ResultTables], None] | None = None,
    last: Callable[[duckdb.DuckDBPyConnection], None] | None = None,
) -> int:
    """Write each batch — `(tables, is_last)` — in a transaction of its own as it arrives, each
    replacing the results of its own traces: an interrupted evaluation keeps every batch it
    finished, and holds only the batch being written. `each` runs in every batch's transaction,
    `last` in the last batch's (in one of its own when there is no batch): what must commit with
    the final results. Returns the number of traces written."""
    written = 0
    finished = False
    for tables, is_last in batches:
        with store.transaction() as conn:
            replace_results(conn, tables)
            if each is not None:
                each(conn, tables)
            if is_last and last is not None:
                last(conn)
        written += tables.traces.num_rows
        finished = finished or is_last
    if not finished and last is not None:
        with store.transaction() as conn:
            last(conn)
    return written


def write_result_batches(
    store: Store,
    batches: Iterable[ResultTables],
    after: Callable[[duckdb.DuckDBPyConnection], None] | None = None,
) -> int:
    """Write batches as they arrive — each replacing the results of its own traces — all inside
    one transaction: a reader sees the old results or the new ones, never a mix. `after` runs in
    the same transaction (what must commit with the results). Returns the number of traces
    written."""
    written = 0
    with store.transaction() as conn:
        for tables in batches:
            replace_results(conn, tables)
            written += tables.traces.num_rows
        if after is not None:
            after(conn)
    return written


def replace_results(conn: duckdb.DuckDBPyConnection, tables: ResultTables) -> None:
    """Inside a transaction: the results of the traces in `tables.traces` become these rows."""
    batches = {"trace_results": tables.traces, "rung_results": tables.rungs, "findings": tables.findings}
    conn.register("judged_traces", tables.traces.select(["trace_id"]))
    try:
        for table, schema in _TABLES:
            conn.execute(f"DELETE FROM {table} WHERE trace_id IN (SELECT trace_id FROM judged_traces)")
            conn.register("new_rows", batches[table])
            try:
                conn.execute(f"INSERT INTO {table} ({', '.join(schema.names)}) SELECT * FROM new_rows")
            finally:
                conn.unregister("new_rows")
    finally:
        conn.unregister("judged_traces")
