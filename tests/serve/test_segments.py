"""Receiver segments and folding them into the store: exactly once, whatever dies when."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import producers
import pyarrow as pa
import pyarrow.parquet as pq
from conftest import cli

from traceladder.decode import decode_traces
from traceladder.store.db import Store, open_store
from traceladder.store.fold import fold_pending
from traceladder.store.segments import SegmentWriter, pending, segment_root
from traceladder.store.writes import SegmentRecord, write_batch


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


def test_a_write_records_every_folded_segment_with_rows_or_without(tmp_path: Path) -> None:
    """The records that keep a segment from being folded twice are written in one insert, with the
    rows of the same transaction or alone (a segment whose rows were all stored already)."""
    with Store(tmp_path / "s.duckdb") as store:
        with_rows = [SegmentRecord("spans/a.parquet", "spans", 7), SegmentRecord("logs/b.parquet", "logs", 0)]
        write_batch(store, spans=span_table(), segments=with_rows)
        write_batch(store, segments=[SegmentRecord("spans/c.parquet", "spans", 0)])
        assert store.fetchall("SELECT name, signal, rows FROM ingested_segments ORDER BY name") == [
            ("logs/b.parquet", "logs", 0),
            ("spans/a.parquet", "spans", 7),
            ("spans/c.parquet", "spans", 0),
        ]
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
    assert sorted(p.name for p in (root / "damaged").iterdir()) == [
        "spans-00000000000000000001-1-00000000.parquet",
        "spans-00000000000000000001-1-00000000.parquet.reason",
    ]
    reason = (root / "damaged" / "spans-00000000000000000001-1-00000000.parquet.reason").read_text()
    assert reason.startswith("cannot be read: ")


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


def _with_column(table: pa.Table, name: str, values: pa.Array) -> pa.Table:
    i = table.schema.get_field_index(name)
    return table.set_column(i, table.schema.field(i), values)


def refused_tables() -> dict[str, pa.Table]:
    """Segments that read as Parquet but hold rows the store refuses."""
    t = span_table("openllmetry/parallel")
    return {
        "attributes not JSON": _with_column(
            t, "attributes", pa.array(["not json{"] * t.num_rows, pa.string())
        ),
        "invalid UTF-8": _with_column(
            span_table("otel-openai-v2-default/parallel"),
            "name",
            pa.array([b"bad \xff\xfe"] * t.num_rows, pa.binary()).view(pa.string()),
        ),
    }


def test_a_segment_the_store_refuses_is_set_aside_and_every_later_one_folded(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    open_store(db).close()
    root = segment_root(db)
    writer = SegmentWriter(root)
    writer.write("spans", span_table())  # acknowledged before the bad ones
    bad = [writer.write("spans", table) for table in refused_tables().values()]
    writer.write("spans", span_table("openinference/parallel"))  # and after them
    # a reader shows both good segments, says once that it cannot show the bad ones, moves nothing
    read = cli("sql", "--db", str(db), "SELECT count(DISTINCT trace_id), count(*) FROM spans", "--csv")
    assert read.returncode == 0, read.stderr
    assert read.stdout.splitlines()[1] == "2,14"
    assert read.stderr.count("\n") == 1, read.stderr
    assert "2 segments are pending and not shown" in read.stderr and "Malformed JSON" in read.stderr
    assert len(pending(root)) == 4
    said: list[str] = []
    with open_store(db, say=said.append) as store:  # a writer folds, and sets the bad ones aside
        assert store.fetchall("SELECT count(DISTINCT trace_id), count(*) FROM spans") == [(2, 14)]
    assert len(said) == 1, said  # said once, for both
    assert "set aside 2 segments" in said[0] and "Malformed JSON" in said[0]
    damaged = root / "damaged"
    reasons = {p.name: p.read_text() for p in damaged.glob("*.reason")}
    assert sorted(reasons) == sorted(f"spans-{s.path.name}.reason" for s in bad)
    assert "Malformed JSON" in reasons[f"spans-{bad[0].path.name}.reason"]
    assert "Invalid unicode" in reasons[f"spans-{bad[1].path.name}.reason"]
    assert pending(root) == []
    again = cli("sql", "--db", str(db), "SELECT count(*) FROM tool_calls", "--csv")
    assert (again.returncode, again.stderr) == (0, "")  # the store works, and nothing is said twice
    assert again.stdout.splitlines()[1] == "6"


def test_serve_starts_on_a_store_with_a_refused_segment(tmp_path: Path) -> None:
    from receiver import ServeProcess
    from test_serve import request, span

    db = tmp_path / "s.duckdb"
    open_store(db).close()
    SegmentWriter(segment_root(db)).write("spans", refused_tables()["attributes not JSON"])
    with ServeProcess(db) as serve:  # its start folds: the bad segment used to stop it with exit 2
        assert serve.post("/v1/traces", request(span(0), span(1))).status == 200
        code, err = serve.stop()
    assert code == 0, err
    assert err.count("set aside 1 segment") == 1 and "Traceback" not in err
    assert cli("sql", "--db", str(db), "SELECT count(*) FROM spans", "--csv").stdout.splitlines()[1] == "2"


def _silently_corrupted(data: bytes, table: pa.Table) -> bytes:
    """`data` with one bit flipped where Parquet itself notices nothing: the file still reads,
    as different rows (about one flip in ten does, in zstd-compressed pages)."""
    for i in range(4, len(data) - 8):
        flipped = bytearray(data)
        flipped[i] ^= 0x10
        try:
            if not pq.read_table(pa.BufferReader(bytes(flipped))).equals(table):
                return bytes(flipped)
        except (OSError, pa.ArrowException):
            continue
    raise AssertionError("no silent flip found")


def test_a_flipped_bit_is_caught_by_the_checksum_and_never_folded(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    open_store(db).close()
    root = segment_root(db)
    writer = SegmentWriter(root)
    segment = writer.write("spans", span_table())
    table = pq.read_table(segment.path)
    segment.path.write_bytes(_silently_corrupted(segment.path.read_bytes(), table))
    writer.write("spans", span_table("openinference/parallel"))
    r = cli("sql", "--db", str(db), "SELECT DISTINCT trace_id FROM spans", "--csv")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[1:] == [producers.trace_id(producers.FIXTURES / "openinference/parallel")]
    assert "checksum mismatch" in r.stderr and r.stderr.count("\n") == 1
    assert segment.path.exists()  # a reader moves nothing; the next writer sets it aside
    said: list[str] = []
    open_store(db, say=said.append).close()
    assert len(said) == 1 and "checksum mismatch" in said[0]
    assert (root / "damaged" / f"spans-{segment.path.name}").exists()


def test_a_segment_written_before_checksums_still_folds(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    open_store(db).close()
    segment = SegmentWriter(segment_root(db)).write("spans", span_table())
    assert segment.checksum is not None
    old_style = segment.path.with_name(segment.path.name.split(".crc32-")[0] + ".parquet")
    segment.path.rename(old_style)  # the name an earlier traceladder gave it
    r = cli("sql", "--db", str(db), "SELECT count(*) FROM spans", "--csv")
    assert (r.returncode, r.stderr, r.stdout.splitlines()[1]) == (0, "", "7")
    open_store(db).close()
    assert not old_style.exists()


def test_sql_shows_pending_segments_while_another_reader_holds_the_store(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    root = segment_root(db)
    SegmentWriter(root).write("spans", span_table())
    open_store(db).close()  # folds the first segment
    SegmentWriter(root).write("spans", span_table("openinference/parallel"))
    holder = subprocess.Popen(
        [sys.executable, "-c", f"import duckdb, sys; c = duckdb.connect({str(db)!r}, read_only=True); "
         "print('ready', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        r = cli(
            "sql",
            "--db",
            str(db),
            "SELECT count(*) FROM spans",
            "--csv",
            env={"TRACELADDER_LOCK_TIMEOUT": "1"},
        )
        assert (r.returncode, r.stderr) == (0, "")
        assert r.stdout.splitlines()[1] == "14"  # the folded spans and the pending ones
        assert len(pending(root)) == 1  # still pending, untouched
    finally:
        holder.communicate("")
