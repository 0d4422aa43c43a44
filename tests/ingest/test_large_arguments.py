"""Nothing is lost for being large: a trace whose tool call carries a 10 MB (or 50 MB) argument is
stored by `ingest` and by `serve` alike, with the rest of its file. Under ingest's memory cap DuckDB
runs out of memory on such a batch; the write is retried with more room in a new transaction — the
failed one was rolled back, so it never poisons the retry (it used to end in "Current transaction
is aborted", exit 2, 0 spans stored)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import cli, rows
from receiver import ServeProcess
from recorded_traces import trace_spans, write_traces

JSON = "application/json"


def traces(path: Path, megabytes: int) -> Path:
    big = json.dumps({"order_id": "W1", "note": "x" * (megabytes << 20)})
    return write_traces(path, [
        trace_spans(1, "Where is W1?", [("get_order", big, '{"ok": 1}', True)]),
        trace_spans(2, "Where is W2?", [("get_order", '{"order_id": "W2"}', '{"ok": 1}', True)]),
    ])  # fmt: skip


def stored(db: Path) -> list[tuple]:
    return rows(db, "SELECT trace_id, length(arguments_raw) FROM tool_calls ORDER BY trace_id")


@pytest.mark.parametrize("megabytes", [10, 50])
def test_ingest_stores_a_trace_with_a_huge_argument(tmp_path, megabytes):
    db = tmp_path / "t.duckdb"
    done = cli("ingest", str(traces(tmp_path / "big.json", megabytes)), "--db", str(db), timeout=600)
    assert done.returncode == 0, done.stderr
    assert "problems=0" in done.stdout
    size = len(json.dumps({"order_id": "W1", "note": "x" * (megabytes << 20)}))
    assert stored(db) == [("1".zfill(32), size), ("2".zfill(32), len('{"order_id": "W2"}'))]


def test_serve_stores_the_same_request(tmp_path):
    db = tmp_path / "s.duckdb"
    body = traces(tmp_path / "big.json", 10).read_bytes()
    with ServeProcess(db) as serve:
        reply = serve.post("/v1/traces", body, content_type=JSON)
        assert reply.status == 200, reply
        code, err = serve.stop()
        assert code == 0, err
    size = len(json.dumps({"order_id": "W1", "note": "x" * (10 << 20)}))
    assert stored(db) == [("1".zfill(32), size), ("2".zfill(32), len('{"order_id": "W2"}'))]
