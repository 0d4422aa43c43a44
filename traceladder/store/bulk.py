"""Many rows into one table in one statement.

DuckDB's `executemany` runs its statement once per row (~2 ms each, decision 610's measure in
`group_conversations`), so a write whose row count grows with the store registers its rows as one
Arrow table and inserts them with one `INSERT … SELECT` (decision 652).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

import duckdb
import pyarrow as pa

from traceladder.text import utf8_deep

_NAME = "bulk_rows"  # the registered view's name, unregistered as soon as the insert ran


def insert_rows(
    conn: duckdb.DuckDBPyConnection, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]
) -> None:
    """Insert `rows` (each a sequence of values in `columns` order) into `table`'s `columns`, in
    one statement; the other columns take their defaults. Values are typed by Arrow and cast by
    DuckDB to the columns' types, as the statement's parameters were. A lone surrogate in a text
    (a decoded JSON "\\ud800") is stored as U+FFFD, as in the result tables."""
    if not rows:
        return
    try:
        arrow = _arrow(columns, rows)
    except UnicodeEncodeError:
        arrow = _arrow(columns, utf8_deep(list(rows)))
    conn.register(_NAME, arrow)
    try:
        names = ", ".join(columns)
        conn.execute(f"INSERT INTO {table} ({names}) SELECT {names} FROM {_NAME}")
    finally:
        with contextlib.suppress(duckdb.Error):  # inside an aborted transaction
            conn.unregister(_NAME)


def _arrow(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> pa.Table:
    values = list(zip(*rows, strict=True))
    return pa.table({name: pa.array(list(column)) for name, column in zip(columns, values, strict=True)})
