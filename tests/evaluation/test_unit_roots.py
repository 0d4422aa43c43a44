"""A batch's units read from the roots held for the evaluation (`unit_roots`, then
`read_units_of` on a slice, decision 550) are the units `read_units` gives for those traces: run,
case, repeat, domain, agent status, the trace index's facts, the definitions digest and the
sandbox ledger alike — on a store mixing a suite run's traces (ledgers on their roots) with
ingested traces that name no case."""

from __future__ import annotations

from conftest import cli, cli_in_process
from recorded_traces import trace_spans, write_traces

from traceladder.store.db import Store
from traceladder.store.readers import read_units, read_units_of, unit_roots


def test_a_slice_of_the_roots_reads_the_units_read_units_reads(tmp_path):
    db = tmp_path / "u.duckdb"
    done = cli(
        "run", "--model", "sim:oracle", "--case", "fc-d1-001", "--repeat", "2", "--db", str(db), "--no-report"
    )
    assert done.returncode == 0, done.stderr
    path = write_traces(tmp_path / "t.json", [
        trace_spans(n, f"Where is W{n}?", [("get_order", f'{{"order_id": "W{n}"}}', '{"ok": 1}', True)])
        for n in (1, 2, 3)
    ])  # fmt: skip
    assert cli_in_process("ingest", str(path), "--db", str(db)).returncode == 0  # set-up
    with Store(db) as store:
        roots, domains = unit_roots(store)
        whole = read_units(store)
        assert [u.trace_id for u in whole] == roots.column("trace_id").to_pylist()
        assert any(u.ledger for u in whole) and any(u.case_id is None for u in whole)
        assert "retail" in domains
        for start in range(0, roots.num_rows, 2):
            part = read_units_of(store, roots.slice(start, 2))
            ids = [u.trace_id for u in part]
            assert part == whole[start : start + 2]
            assert read_units(store, None, ids) == part
