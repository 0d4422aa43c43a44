"""The wide JSON columns of `spans` compressed with zstd: how the store keeps spans, not what it keeps.

Why: a span's attributes (chat histories, tool definitions) are kilobytes of JSON that repeat from
span to span of a trace. DuckDB's default string compression (dictionary, FSST) keeps ~1.4 KB of
each of the bench's 4 KB spans; zstd keeps ~0.2 KB, and writes them in about half the CPU at the
checkpoint (bench/ingest_throughput.py; docs/decisions.md, decision 362). DuckDB sets a column's
compression only when its table is created, so a store whose `spans` predates this is rebuilt
once, in one transaction, by the first command that opens it for writing: the same columns, types,
constraints and rows. A file whose storage format has no zstd (created by a DuckDB before 1.2's
format) keeps its compression: nothing is lost, it is only larger. Columns, types and rows are the
schema's (`store/migrations/`); this is not a migration because it changes none of them.
"""

from __future__ import annotations

import duckdb

ZSTD_COLUMNS = ("attributes", "events", "links")
_MARK = "USING COMPRESSION ZSTD"


def _spans_ddl(conn: duckdb.DuckDBPyConnection) -> str | None:
    row = conn.execute(
        "SELECT sql FROM duckdb_tables() WHERE database_name = current_database() "
        "AND schema_name = 'main' AND table_name = 'spans'"
    ).fetchone()
    return None if row is None else str(row[0])


def zstd_available(conn: duckdb.DuckDBPyConnection) -> bool:
    """Whether this file's storage format can hold zstd columns (a table created and rolled back)."""
    conn.execute("BEGIN TRANSACTION")
    try:
        conn.execute("CREATE TABLE _traceladder_zstd_probe (x VARCHAR USING COMPRESSION zstd)")
    except duckdb.BinderException:  # "that type is not available yet": an older storage format
        return False
    finally:
        conn.execute("ROLLBACK")
    return True


def spans_compressed(conn: duckdb.DuckDBPyConnection) -> bool:
    """Whether `spans` keeps its wide columns with zstd."""
    ddl = _spans_ddl(conn)
    return ddl is not None and _MARK in ddl.upper()


def compress_spans(conn: duckdb.DuckDBPyConnection) -> bool:
    """Rebuild `spans` with `ZSTD_COLUMNS` compressed, once; True when it did. Call on a writing
    connection, outside a transaction (this is one)."""
    if _spans_ddl(conn) is None or spans_compressed(conn) or not zstd_available(conn):
        return False
    columns = conn.execute(
        "SELECT column_name, data_type, is_nullable FROM duckdb_columns() WHERE database_name = "
        "current_database() AND schema_name = 'main' AND table_name = 'spans' ORDER BY column_index"
    ).fetchall()
    definitions = ", ".join(
        f'"{name}" {kind}{"" if nullable else " NOT NULL"}'
        + (" USING COMPRESSION zstd" if name in ZSTD_COLUMNS else "")
        for name, kind, nullable in columns
    )
    conn.execute("BEGIN TRANSACTION")
    try:
        conn.execute(f"CREATE TABLE _spans_zstd ({definitions})")
        conn.execute("INSERT INTO _spans_zstd SELECT * FROM spans")
        conn.execute("DROP TABLE spans")
        conn.execute("ALTER TABLE _spans_zstd RENAME TO spans")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return True
