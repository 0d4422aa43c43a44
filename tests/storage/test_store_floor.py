"""How the store keeps spans at its floor: wide JSON columns with zstd (rebuilt once for a store
written before), and a batch's new spans decided in Arrow (the first of each id, none stored twice)."""

from __future__ import annotations

import sys
from pathlib import Path

import duckdb
import pyarrow as pa

from traceladder.receive.ingest.run import ingest
from traceladder.store import Store
from traceladder.store.compression import ZSTD_COLUMNS, spans_compressed
from traceladder.store.spans import SPAN_SCHEMA
from traceladder.store.writes import write_batch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import otlp_workload  # noqa: E402


def _compressions(db: Path, column: str) -> set[str]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(
            "SELECT DISTINCT compression FROM pragma_storage_info('spans') WHERE column_name = ? "
            "AND segment_type <> 'VALIDITY'",
            [column],
        ).fetchall()
    finally:
        con.close()
    return {r[0] for r in rows}


def _ingested(tmp_path: Path, db: Path, requests: int = 2) -> int:
    lines = [otlp_workload.to_otlp_json(b) for b in otlp_workload.make_requests(requests, seed=7)]
    path = tmp_path / f"{db.stem}.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    with Store(db) as store:
        summary = ingest(store, [str(path)])
    assert not summary.problems
    return summary.new_spans


def _uncompressed_spans(db: Path) -> None:
    """Rebuild `spans` as a store written before keeps it: default compression, same columns."""
    con = duckdb.connect(str(db))
    try:
        (ddl,) = con.execute("SELECT sql FROM duckdb_tables() WHERE table_name = 'spans'").fetchone()
        con.execute("CREATE TABLE old_spans AS SELECT * FROM spans")
        con.execute("DROP TABLE spans")
        con.execute(ddl.replace(" USING COMPRESSION ZSTD", ""))
        con.execute("INSERT INTO spans SELECT * FROM old_spans")
        con.execute("DROP TABLE old_spans")
        con.execute("CHECKPOINT")
    finally:
        con.close()


def test_a_new_store_keeps_span_attributes_with_zstd(tmp_path: Path) -> None:
    db = tmp_path / "new.duckdb"
    assert _ingested(tmp_path, db) == 2 * otlp_workload.BATCH
    assert _compressions(db, "attributes") == {"ZSTD"}


def test_a_store_written_before_is_rebuilt_once_with_the_same_rows_and_constraints(tmp_path: Path) -> None:
    db = tmp_path / "old.duckdb"
    _ingested(tmp_path, db)
    _uncompressed_spans(db)
    assert "ZSTD" not in _compressions(db, "attributes")
    con = duckdb.connect(str(db), read_only=True)
    before = con.execute("SELECT * FROM spans ORDER BY trace_id, span_id").fetchall()
    con.close()
    with Store(db) as store:  # a writer's open rebuilds it
        assert spans_compressed(store.conn)
        after = store.fetchall("SELECT * FROM spans ORDER BY trace_id, span_id")
        not_null = {
            r[0]
            for r in store.fetchall(
                "SELECT column_name FROM duckdb_columns() WHERE table_name = 'spans' AND NOT is_nullable"
            )
        }
    assert after == before
    assert not_null == {"trace_id", "span_id", "name", "source"}
    for column in ZSTD_COLUMNS[:1]:
        assert _compressions(db, column) == {"ZSTD"}


def test_a_reader_never_rebuilds(tmp_path: Path) -> None:
    db = tmp_path / "old.duckdb"
    _ingested(tmp_path, db, requests=1)
    _uncompressed_spans(db)
    data = db.read_bytes()
    with Store(db, read_only=True) as store:
        assert not spans_compressed(store.conn)
    assert db.read_bytes() == data


def test_a_file_of_an_older_storage_format_keeps_its_compression_and_works(tmp_path: Path) -> None:
    db = tmp_path / "v0102.duckdb"
    con = duckdb.connect()
    con.execute(f"ATTACH '{db}' AS old (STORAGE_VERSION 'v0.10.2')")  # as DuckDB 1.1 created files
    con.close()
    with Store(db) as store:
        assert not spans_compressed(store.conn)
    assert _ingested(tmp_path, db, requests=1) == otlp_workload.BATCH


def _span(span_id: str, name: str) -> dict[str, object]:
    return {
        "trace_id": "ab" * 16, "span_id": span_id, "parent_span_id": None, "name": name, "kind": "INTERNAL",
        "start_ns": 1, "end_ns": 2, "status_code": "UNSET", "status_message": None, "attributes": "{}",
        "events": "[]", "links": "[]", "resource": "{}", "scope_name": None, "scope_version": None,
        "trace_state": None, "flags": 0, "source": "test",
    }  # fmt: skip


def test_a_span_repeated_in_a_batch_or_already_stored_is_stored_once_the_first_kept(tmp_path: Path) -> None:
    def batch(*spans: dict[str, object]) -> pa.Table:
        return pa.Table.from_pylist(list(spans), schema=SPAN_SCHEMA)

    with Store(tmp_path / "s.duckdb") as store:
        counts = write_batch(store, spans=batch(_span("1" * 16, "first"), _span("1" * 16, "again")))
        assert counts.spans == 1
        counts = write_batch(
            store, spans=batch(_span("1" * 16, "resent"), _span("2" * 16, "new"), _span("2" * 16, "twice"))
        )
        assert counts.spans == 1
        counts = write_batch(
            store,
            spans=batch(
                _span("3" * 16, "third"), _span("2" * 16, "stored"), _span("3" * 16, "repeat"),
                _span("4" * 16, "fourth"), _span("4" * 16, "repeat"), _span("5" * 16, "fifth"),
            ),
        )  # fmt: skip
        assert counts.spans == 3
        rows = store.fetchall("SELECT span_id, name FROM spans ORDER BY span_id")
        assert store.fetchall("SELECT spans FROM traces") == [(5,)]
    assert rows == [("1" * 16, "first"), ("2" * 16, "new"), ("3" * 16, "third"), ("4" * 16, "fourth"),
                    ("5" * 16, "fifth")]  # fmt: skip
