"""`ingest --processes N` decodes in worker processes and stores exactly what one process does
(issue 24, point 3): the same rows in every table, the same summary, the same problem lines and
exit code for a broken file, and nothing of the good requests lost."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import duckdb

from tests.conftest import cli
from traceladder.receive.ingest.parallel import Decoders, decode_unit, units
from traceladder.receive.ingest.run import ingest
from traceladder.store.db import Store

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import otlp_workload  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TABLES = {
    "spans": "trace_id, span_id",
    "log_records": "record_id",
    "tool_calls": "trace_id, ordinal",
    "tool_definitions": "trace_id, name",
}


def _inputs(root: Path) -> Path:
    """Several files (so several decode units), one of them broken in the middle."""
    root.mkdir()
    spans = otlp_workload.make_spans(2 * otlp_workload.BATCH, seed=9)
    lines = [otlp_workload.to_otlp_json(b) for b in otlp_workload.encode_requests(spans)]
    (root / "a.jsonl").write_bytes(lines[0] + b"\n")
    # a line cut short between two good ones: reported, the good ones kept
    (root / "b.jsonl").write_bytes(lines[1] + b"\n" + lines[1][:200] + b"\n" + lines[0] + b"\n")
    (root / "c.pb").write_bytes(b"\x0a\xff\xff")  # truncated protobuf
    shutil.copytree(FIXTURES / "producers" / "openinference" / "parallel", root / "openinference")
    shutil.copytree(FIXTURES / "frameworks" / "pydantic-ai" / "chain-plain", root / "pydantic-ai")
    for extra in root.rglob("*.json"):  # expected.json etc. are not OTLP
        extra.unlink()
    return root


def _tables(db: Path) -> dict[str, list[tuple]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {t: con.execute(f"SELECT * FROM {t} ORDER BY {key}").fetchall() for t, key in TABLES.items()}
    finally:
        con.close()


def test_n_processes_store_what_one_does(tmp_path: Path) -> None:
    """The CLI in one process against `ingest` with three decode processes. The inputs are far
    below one default decode group (32 MB), where the pool never starts; so the many-process side
    cuts its groups at 4 KB, which starts it (and shows the rows do not depend on the grouping)."""
    inputs = _inputs(tmp_path / "in")
    one = cli("ingest", "--db", str(tmp_path / "one.duckdb"), "--processes", "1", str(inputs))
    assert one.returncode == 2, one.stderr
    problems: list[str] = []
    with Store(tmp_path / "many.duckdb") as store:
        summary = ingest(store, [str(inputs)], processes=3, group_bytes=4096, on_problem=problems.append)
    assert one.stderr.splitlines() == [f"traceladder: ingest: {line}" for line in problems]
    assert f"spans={summary.spans}" in one.stdout
    assert "b.jsonl:2" in one.stderr and "c.pb" in one.stderr
    assert "Traceback" not in one.stderr
    first, second = _tables(tmp_path / "one.duckdb"), _tables(tmp_path / "many.duckdb")
    assert first == second
    # nothing of the good requests lost: every span of the two good workload lines is stored
    assert len(first["spans"]) >= 2 * otlp_workload.BATCH
    assert len(first["tool_calls"]) > 0


def test_units_are_decoded_by_other_processes_in_order(tmp_path: Path) -> None:
    inputs = _inputs(tmp_path / "in")
    files = sorted(p for p in inputs.rglob("*") if p.is_file())
    # groups of 4 KB: the input passes one group, so the pool starts
    cut = [u for i, path in enumerate(files) for u in units(path, i, None, group_bytes=4096)]
    assert len(cut) > 2
    decoders = Decoders(2)
    try:
        results = [r for unit in cut for r in decoders.submit(unit)] + list(decoders.drain())
        assert decoders._pool is not None  # the pool ran: these came from worker processes
    finally:
        decoders.close()
    assert [u for u, _ in results] == cut
    inline = [decode_unit(u) for u in cut]
    assert [_comparable(items) for _, items in results] == [_comparable(items) for items in inline]


def _comparable(items: list) -> list:
    out = []
    for item in items:
        if hasattr(item, "batch"):
            out.append((item.where, item.signal, item.batch.table.to_pylist(), item.batch.rejected))
        else:
            out.append((type(item).__name__, str(item)))
    return out


def test_input_below_one_decode_group_starts_no_process(tmp_path: Path) -> None:
    """Several small files are several units (a unit ends at each file's end), yet less input
    than one decode group: decoded here, in order, as inline — no interpreter started for them."""
    inputs = _inputs(tmp_path / "in")
    files = sorted(p for p in inputs.rglob("*") if p.is_file())
    cut = [u for i, path in enumerate(files) for u in units(path, i, None)]
    assert len(cut) > 2
    decoders = Decoders(2)
    try:
        results = [r for unit in cut for r in decoders.submit(unit)] + list(decoders.drain())
        assert decoders._pool is None
    finally:
        decoders.close()
    assert [u for u, _ in results] == cut
    assert [_comparable(items) for _, items in results] == [_comparable(decode_unit(u)) for u in cut]
