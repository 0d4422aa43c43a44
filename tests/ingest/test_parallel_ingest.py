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
    inputs = _inputs(tmp_path / "in")
    one = cli("ingest", "--db", str(tmp_path / "one.duckdb"), "--processes", "1", str(inputs))
    many = cli("ingest", "--db", str(tmp_path / "many.duckdb"), "--processes", "3", str(inputs))
    assert one.returncode == many.returncode == 2, (one.stderr, many.stderr)
    assert one.stdout == many.stdout
    assert one.stderr == many.stderr
    assert "b.jsonl:2" in one.stderr and "c.pb" in one.stderr
    assert "Traceback" not in one.stderr + many.stderr
    first, second = _tables(tmp_path / "one.duckdb"), _tables(tmp_path / "many.duckdb")
    assert first == second
    # nothing of the good requests lost: every span of the two good workload lines is stored
    assert len(first["spans"]) >= 2 * otlp_workload.BATCH
    assert len(first["tool_calls"]) > 0


def test_units_are_decoded_by_other_processes_in_order(tmp_path: Path) -> None:
    inputs = _inputs(tmp_path / "in")
    files = sorted(p for p in inputs.rglob("*") if p.is_file())
    cut = [u for i, path in enumerate(files) for u in units(path, i, None)]
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
