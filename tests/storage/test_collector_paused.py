"""A batch is written with Python's cyclic garbage collector paused (`store.collector`): the
collector rescanning a batch's parsed attributes and the stage's views cost ~15% of ingest's CPU
(docs/decisions.md 720). What is proved here is the pause itself — on for the whole extraction,
restored after, also when the write fails — not the time, which the bench measures."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from traceladder.decode.bodies import decode_traces
from traceladder.extract.stage import Stage
from traceladder.store import Store
from traceladder.store.collector import collector_paused
from traceladder.store.derived import Batch, DerivedRows
from traceladder.store.writes import write_batch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import otlp_workload  # noqa: E402


class _Watched(Stage):
    """Our extraction stage, noting whether the collector was on each time the store called it."""

    def __init__(self) -> None:
        self.collector_on: list[bool] = []

    def extract(self, batch: Batch, conventions: str) -> DerivedRows:
        self.collector_on.append(gc.isenabled())
        return super().extract(batch, conventions)


def _spans() -> pa.Table:
    decoded = decode_traces(otlp_workload.make_requests(1, seed=3)[0], "application/x-protobuf")
    table = decoded.table
    return table.append_column("source", pa.array(["test"] * table.num_rows, pa.string()))


def test_the_stage_runs_with_the_collector_paused_and_it_comes_back_after(tmp_path: Path) -> None:
    assert gc.isenabled()
    stage = _Watched()
    spans = _spans()
    with Store(tmp_path / "t.duckdb") as store:
        counts = write_batch(store, spans=spans, extraction=stage)
        calls = store.fetchall("SELECT count(*) FROM tool_calls")[0][0]
    assert counts.spans == spans.num_rows and calls > 0  # the real stage derived the real calls
    assert stage.collector_on == [False]
    assert gc.isenabled()


def test_a_refused_write_turns_the_collector_back_on(tmp_path: Path) -> None:
    spans = _spans()
    bad = spans.set_column(
        spans.schema.get_field_index("attributes"), "attributes", pa.array(["not json"] * spans.num_rows)
    )
    with Store(tmp_path / "t.duckdb") as store, pytest.raises(Exception, match="(?i)json"):
        write_batch(store, spans=bad)
    assert gc.isenabled()


def test_a_nested_pause_keeps_the_collector_off_until_the_outer_one_ends() -> None:
    with collector_paused():
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # off before: left off
    finally:
        gc.enable()
