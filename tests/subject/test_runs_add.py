"""`runs add --where …`: traces already tagged with case ids (the live path of docs/live.md)
become a run — recorded, judged, and then gated and compared like any run, through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import cli, cli_in_process, out_value, rows
from tagged_traces import CASES, _traces


def test_tagged_traces_become_runs_that_gate_and_compare(tmp_path: Path) -> None:
    db = tmp_path / "live.duckdb"
    files = []
    for i, (version, broken) in enumerate(
        [("1.0", set()), ("1.0", set()), ("1.0", set()), ("1.1", set(CASES[:6]))]
    ):
        path = tmp_path / f"export-{i}.json"
        path.write_text(json.dumps(_traces(version, broken, i + 1)))
        files.append(path)
    done = cli_in_process(
        "ingest", "--db", str(db), "--processes", "1", *map(str, files)
    )  # set-up in one process: decision 801
    assert done.returncode == 0, done.stderr

    old = []
    for i in range(3):  # the three exports of 1.0, each a run of its own
        where = f"service_version = '1.0' AND trace_id LIKE '{i + 1:08x}%'"
        added = cli("runs", "add", "--where", where, "--db", str(db))
        assert added.returncode == 0, added.stderr
        assert "recorded 12 trace(s) of 12 case(s)" in added.stdout
        old.append(out_value(added, "run_id"))
    assert out_value(added, "subject") == "traces:shop-agent" and out_value(added, "agent_version") == "1.0"
    new = cli("runs", "add", "--where", "service_version = '1.1'", "--db", str(db))
    assert new.returncode == 0, new.stderr
    new_id = out_value(new, "run_id")
    assert rows(db, "SELECT verdict, count(*) FROM case_results WHERE run_id = ? GROUP BY 1 ORDER BY 1", [new_id]) == [
        ("FAIL", 6), ("PASS", 6)
    ]  # fmt: skip
    assert rows(db, "SELECT DISTINCT verdict FROM case_results WHERE run_id = ?", [old[0]]) == [("PASS",)]

    again = cli("runs", "add", "--where", "service_version = '1.1'", "--db", str(db))
    assert again.returncode == 2 and f"already belongs to run {new_id}" in again.stderr
    nothing = cli("runs", "add", "--where", "service = 'nobody'", "--db", str(db))
    assert nothing.returncode == 2 and "selects no trace tagged with traceladder.case.id" in nothing.stderr
    bad = cli("runs", "add", "--where", "no_such_column = 1", "--db", str(db))
    assert bad.returncode == 2 and "--where is not a predicate over the traces table" in bad.stderr

    ev = tmp_path / "eval"
    for args in (
        ("consistency", *old, "--output", str(ev / "consistency.json")),
        ("baseline", "review-template", old[0], "--output", str(ev / "review.json")),
        ("baseline", "lock", "--canonical", old[0], "--consistency", str(ev / "consistency.json"),
         "--review", str(ev / "review.json"), "--output", str(ev / "baseline.json")),
    ):  # fmt: skip
        step = cli(*args, "--db", str(db))
        assert step.returncode == 0, step.stderr
    gate = cli("gate", "--run", new_id, "--baseline", str(ev / "baseline.json"), "--db", str(db))
    assert gate.returncode == 1, gate.stdout + gate.stderr
    compare = cli("compare", old[0], new_id, "--db", str(db), "--format", "json")
    assert json.loads(compare.stdout)["differs"] == ["agent_version"]
