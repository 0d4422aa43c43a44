"""Receiver segments and folding them into the store: exactly once, whatever dies when."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import producers
import pyarrow as pa
from conftest import cli

from traceladder.otlp import decode_traces
from traceladder.storage.db import Store, open_store
from traceladder.storage.fold import fold_pending
from traceladder.storage.segments import SegmentWriter, pending, segment_root


def span_table(scenario: str = "otel-genai-openai/parallel") -> pa.Table:
    body = (producers.FIXTURES / scenario / "traces-001.pb").read_bytes()
    table = decode_traces(body, "application/x-protobuf").table
    return table.append_column("source", pa.array(["otlp"] * table.num_rows, pa.string()))


def count(store: Store, table: str = "spans") -> int:
    return store.fetchall(f"SELECT count(*) FROM {table}")[0][0]


def test_opening_the_store_folds_pending_segments_once(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    writer = SegmentWriter(segment_root(db))
    writer.write("spans", span_table())
    writer.write("spans", span_table())  # a re-sent request: same spans
    with open_store(db) as store:
        assert count(store) == 7 and count(store, "tool_calls") == 3
        assert count(store, "ingested_segments") == 0
    assert pending(segment_root(db)) == []
    with open_store(db) as store:
        assert count(store) == 7


def test_a_crash_between_commit_and_unlink_never_loads_a_segment_twice(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    segment = SegmentWriter(segment_root(db)).write("spans", span_table())
    kept = tmp_path / "copy.parquet"
    shutil.copy(segment.path, kept)
    with open_store(db) as store:
        assert count(store) == 7
        # what a process killed right after its commit leaves behind: the file, and its record
        shutil.copy(kept, segment.path)
        store.execute(
            "INSERT INTO ingested_segments (name, signal, rows) VALUES (?, 'spans', 7)", [segment.name]
        )
        result = fold_pending(store)
        assert (result.segments, result.spans) == (0, 0)
        assert count(store) == 7 and count(store, "ingested_segments") == 1
    assert not segment.path.exists()


def test_a_damaged_segment_is_set_aside_and_the_rest_folded(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    root = segment_root(db)
    writer = SegmentWriter(root)
    writer.write("spans", span_table())
    (root / "spans" / "00000000000000000001-1-00000000.parquet").write_bytes(b"PAR1 not really")
    with Store(db) as store:
        result = fold_pending(store)
        assert (result.segments, result.damaged, count(store)) == (1, 1, 7)
    assert [p.name for p in (root / "damaged").iterdir()] == ["spans-00000000000000000001-1-00000000.parquet"]


def test_temp_files_of_dead_writers_are_removed_and_live_ones_kept(tmp_path: Path) -> None:
    root = tmp_path / "s.duckdb.segments"
    (root / "spans").mkdir(parents=True)
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    stale = root / "spans" / f".tmp-{dead.stdout.strip()}-x.parquet"
    live = root / "spans" / f".tmp-{os.getpid()}-y.parquet"
    stale.write_bytes(b"half")
    live.write_bytes(b"in progress")
    SegmentWriter(root)
    assert not stale.exists() and live.exists()
    assert pending(root) == []  # temp files are never folded


def test_sql_sees_segments_acknowledged_before_it_started(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    open_store(db).close()
    SegmentWriter(segment_root(db)).write("spans", span_table("openinference/parallel"))
    r = cli("sql", "--db", str(db), "SELECT count(*) FROM spans", "--csv")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[1] == "7"
