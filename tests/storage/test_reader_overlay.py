"""Read-only commands never write (issue 30, point 3; docs/decisions.md 370): with receiver
segments pending beside the store, as `serve` leaves them, every reading command answers with
the pending spans and the rows the extraction stage derives from them — and the store file is
byte for byte what it was, with no write-ahead log, and every segment still pending."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import producers
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import cli, cli_in_process, out_value
from receiver import JS, ServeProcess
from tagged_traces import _traces

from traceladder.decode import decode_traces
from traceladder.store.db import Store, open_store
from traceladder.store.segments import SegmentWriter, pending, segment_root

PENDING_TRACE = f"{3:08x}{0:024x}"  # the first trace of the pending OTLP/JSON request (seq 3)
FIXTURE = "otel-genai-openai/parallel"  # a second pending segment, from a real producer


def _segment(table: pa.Table) -> pa.Table:
    return table.append_column("source", pa.array(["otlp"] * table.num_rows, pa.string()))


def _json_segment(seq: int) -> pa.Table:
    body = json.dumps(_traces("1.2", set(), seq)).encode()
    return _segment(decode_traces(body, "application/json").table)


def _fixture_segment(scenario: str = FIXTURE) -> pa.Table:
    body = (producers.FIXTURES / scenario / "traces-001.pb").read_bytes()
    return _segment(decode_traces(body, "application/x-protobuf").table)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A store with two runs (judged) and two pending segments nobody has folded."""
    root = tmp_path_factory.mktemp("overlay")
    db = root / "s.duckdb"
    runs = []
    for seq in (1, 2):
        path = root / f"export-{seq}.json"
        path.write_text(json.dumps(_traces("1.0", set(), seq)))
        assert cli_in_process("ingest", "--db", str(db), str(path)).returncode == 0
        added = cli("runs", "add", "--where", f"trace_id LIKE '{seq:08x}%'", "--db", str(db))
        assert added.returncode == 0, added.stderr
        runs.append(out_value(added, "run_id"))
    writer = SegmentWriter(segment_root(db))
    writer.write("spans", _json_segment(3))
    writer.write("spans", _fixture_segment())
    return db, runs


def _copy(built: tuple[Path, list[str]], to: Path) -> tuple[Path, list[str]]:
    db, runs = built
    shutil.copytree(db.parent, to, ignore=shutil.ignore_patterns("export-*"))
    return to / db.name, runs


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _commands(db: Path, runs: list[str], out: Path) -> dict[str, tuple[list[str], str | None]]:
    """Every reading command: its arguments, and what its output must show of the pending spans
    (None: it reports on judged runs, which pending spans are not yet part of)."""
    fixture_trace = producers.trace_id(producers.FIXTURES / FIXTURE)
    d = ["--db", str(db)]
    return {
        "sql spans": (["sql", *d, "SELECT DISTINCT trace_id FROM spans ORDER BY 1", "--csv"], PENDING_TRACE),
        "sql tool_calls": (["sql", *d, "SELECT DISTINCT trace_id FROM tool_calls", "--csv"], fixture_trace),
        "sql traces": (["sql", *d, "SELECT trace_id, spans FROM traces", "--csv"], f"{PENDING_TRACE},2"),
        "explain": (["explain", *d, PENDING_TRACE], "execute_tool"),
        "export": (["export", *d, "--out", str(out / "export")], None),
        "cases from-traces": (["cases", "from-traces", *d, "--out", str(out / "cases"), "--trace", fixture_trace], "recorded 1 cases"),
        "report": (["report", *d, runs[0]], None),
        "gate": (["gate", *d, "--run", runs[1], "--min-pass-rate", "0"], None),
        "compare": (["compare", *d, runs[0], runs[1]], None),
        "consistency": (["consistency", *d, *runs, "--output", str(out / "consistency.json")], None),
        "trend": (["trend", *d], None),
        "plugins": (["plugins", *d], None),
        "baseline review-template": (["baseline", "review-template", *d, runs[0], "--output", str(out / "review.json")], None),
    }  # fmt: skip


NAMES = list(_commands(Path("x"), ["a", "b"], Path("y")))


@pytest.mark.parametrize("name", NAMES)
def test_a_reading_command_shows_pending_spans_and_writes_nothing(
    built: tuple[Path, list[str]], tmp_path: Path, name: str
) -> None:
    db, runs = _copy(built, tmp_path / "store")
    before = _digest(db)
    args, shows = _commands(db, runs, tmp_path)[name]
    r = cli(*args)
    assert r.returncode == 0, r.stderr
    assert r.stderr == "" or "pending" not in r.stderr, r.stderr  # nothing it could not show
    if shows is not None:
        assert shows in r.stdout, r.stdout
    assert _digest(db) == before
    assert not db.with_name(db.name + ".wal").exists()
    assert len(pending(segment_root(db))) == 2
    if name == "export":  # the pending spans are in the export, beside the stored ones
        exported = pq.read_table(tmp_path / "export").column("trace_id").to_pylist()
        assert PENDING_TRACE in exported and f"{1:08x}{0:024x}" in exported


def _rows(store: Store, sql: str) -> list[tuple]:
    return sorted(store.fetchall(sql), key=repr)


# Every derived table, less what records when a row was written (arrival times and numbers).
DERIVED = {
    "spans": "SELECT * FROM spans",
    "tool_calls": "SELECT * FROM tool_calls",
    "tool_definitions": "SELECT * FROM tool_definitions",
    "trace_reading": "SELECT * FROM trace_reading",
    "traces": "SELECT * EXCLUDE (first_seen, last_seen, seq) FROM traces",
    "conversation_keys": "SELECT * FROM conversation_keys",
    "prior_calls": "SELECT * FROM prior_calls",
    "conversations": "SELECT * FROM conversations",
    "trend_traces": "SELECT * EXCLUDE (first_seen, trace_time, hour_bucket, day_bucket) FROM trend_traces",
    "failures": "SELECT * FROM failures",
}


def test_what_a_reader_lays_over_equals_what_a_writer_folds(
    built: tuple[Path, list[str]], tmp_path: Path
) -> None:
    db, _ = _copy(built, tmp_path / "read")
    folded, _ = _copy(built, tmp_path / "fold")
    # a third segment re-sends spans already stored and adds one to a stored trace's request
    for path in (db, folded):
        SegmentWriter(segment_root(path)).write("spans", _json_segment(1))
    with open_store(db, read_only=True) as reader, open_store(folded) as writer:
        assert reader.read_only and pending(segment_root(db)) and not pending(segment_root(folded))
        for name, sql in DERIVED.items():
            assert _rows(reader, sql) == _rows(writer, sql), name
        assert reader.fetchall(f"SELECT count(*) FROM spans WHERE trace_id = '{PENDING_TRACE}'") == [(2,)]


def test_the_files_own_views_read_the_overlay(built: tuple[Path, list[str]], tmp_path: Path) -> None:
    db, _ = _copy(built, tmp_path / "store")
    with Store(db) as store:  # a view of the file's own, bound by name, as the shipped ones are
        store.execute("CREATE VIEW span_count AS SELECT count(*) AS n FROM spans")
        stored = store.fetchall("SELECT n FROM span_count")[0][0]
        views = [r[0] for r in store.fetchall("SELECT view_name FROM duckdb_views() WHERE NOT internal")]
    before = _digest(db)
    with open_store(db, read_only=True) as reader:
        shown = reader.fetchall("SELECT n FROM span_count")[0][0]
        assert shown == reader.fetchall("SELECT count(*) FROM spans")[0][0] > stored
        for view in views:  # every view of the file still binds under the overlay
            reader.fetchall(f"SELECT * FROM {view} LIMIT 1")
    assert _digest(db) == before


def test_a_reader_answers_while_serve_holds_the_store_for_writing(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    open_store(db).close()
    with ServeProcess(db) as serve:  # folds every 0.2 s, taking the write lock each time
        for seq in range(1, 6):
            body = json.dumps(_traces("1.0", set(), seq)).encode()
            assert serve.post("/v1/traces", body, content_type=JS).status == 200
            r = cli("sql", "--db", str(db), "SELECT count(DISTINCT trace_id) FROM tool_calls", "--csv")
            assert (r.returncode, r.stderr) == (0, ""), r.stderr
            assert int(r.stdout.splitlines()[1]) == 12 * seq  # folded or pending, every call shows
        code, err = serve.stop()
    assert code == 0, err
