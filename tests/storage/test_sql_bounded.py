"""`sql`'s table view is bounded by what a terminal can show: cells cut to 200 characters (saying
how many more there are), at most 200 rows, fetched a few rows at a time — `SELECT * FROM spans`
over spans carrying large attributes prints kilobytes, not the store (it printed 111 MB). `--csv`
and `--json` still give every row and every character."""

from __future__ import annotations

import json

from conftest import cli, cli_in_process
from recorded_traces import trace_spans, write_traces

WIDE = 100_000  # characters of one argument


def test_the_table_view_cuts_cells_and_rows_while_csv_keeps_everything(tmp_path):
    calls = [("get_order", json.dumps({"order_id": "W1", "note": "x" * WIDE}), "{}", True)]
    path = write_traces(tmp_path / "t.json", [trace_spans(n, f"Where is W{n}?", calls) for n in range(1, 31)])
    db = tmp_path / "s.duckdb"
    assert cli_in_process("ingest", str(path), "--db", str(db)).returncode == 0
    spans = int(cli("sql", "--db", str(db), "SELECT count(*) FROM spans", "--csv").stdout.split()[1])
    table = cli("sql", "--db", str(db), "SELECT * FROM spans")
    assert table.returncode == 0, table.stderr
    full = cli("sql", "--db", str(db), "SELECT * FROM spans", "--csv")
    assert full.returncode == 0 and full.stdout.count("x" * WIDE) >= 30 * 3  # every copy, whole
    assert "x" * 201 not in table.stdout
    assert table.stdout.rstrip().endswith(f"{spans} row(s)")
    assert len(table.stdout) < len(full.stdout) / 20
    many = cli("sql", "--db", str(db), "SELECT * FROM range(1000)")
    assert many.stdout.rstrip().endswith("first 200 row(s) shown; use --csv or --json for all of them")
