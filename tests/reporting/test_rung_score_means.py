"""The report's mean rung scores (`summary.mean_rung_scores`) against a plain reference: every
named score of every rung row of a PASS or FAIL trace, NULL values left out, averaged per (rung,
key) and listed in ladder order — rung number, rung name, the key's first position in the rows
that store it, the key.

A judged store, plus a rung whose score maps name their keys in a different order from row to
row, hold a NULL value, an empty map, or belong to a SKIP trace (not averaged): what a plug-in
rung may write, and what the summary's SQL must read the same way as Python reads it here.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import duckdb
import pytest
from bulk_store import bulk_store
from conftest import cli


def _reference(db: Path) -> list[tuple[str, float]]:
    """`rung_name.key` → mean, in the report's order, computed row by row in Python."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(
            "SELECT r.rung, r.rung_name, map_keys(r.scores), map_values(r.scores) FROM rung_results r "
            "JOIN trace_results t USING (trace_id) WHERE t.run_id = 'bulk' AND t.verdict IN ('PASS', 'FAIL') "
            "AND r.scores IS NOT NULL"
        ).fetchall()
    finally:
        con.close()
    sums: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0, 10**9, 10**9])
    for rung, name, keys, values in rows:
        for pos, (key, value) in enumerate(zip(keys, values, strict=True), 1):
            if value is None:
                continue
            seen = sums[(name, key)]
            seen[0] += value
            seen[1] += 1
            seen[2], seen[3] = min(seen[2], rung), min(seen[3], pos)
    ordered = sorted(sums.items(), key=lambda kv: (kv[1][2], kv[0][0], kv[1][3], kv[0][1]))
    return [(f"{name}.{key}", total / n) for (name, key), (total, n, _, _) in ordered]


def test_mean_rung_scores_match_a_row_by_row_reference(tmp_path):
    db = tmp_path / "store.duckdb"
    bulk_store(db, 60, distinct=12)
    assert cli("evaluate", "--db", str(db)).returncode == 0
    con = duckdb.connect(str(db))
    try:
        traces = con.execute(
            "SELECT trace_id, verdict, evaluator_version FROM trace_results ORDER BY trace_id"
        ).fetchall()
        # one PASS of the run turned SKIP: its rows must not count
        passed = next(t for t, verdict, _ in traces if verdict == "PASS")
        con.execute(
            "UPDATE trace_results SET verdict = 'SKIP', settled_at = NULL, settled_by = NULL WHERE trace_id = ?",
            [passed],
        )
        maps = [
            "MAP {'b': 0.25, 'a': 1.0}",
            "MAP {'a': 0.5, 'c': 0.75, 'b': 1.0}",  # b comes third here, second above
            "MAP {'c': NULL, 'a': 0.125}",  # a NULL value is no score
            "MAP {}",
            "NULL",
        ]
        for k, (trace_id, _, version) in enumerate(traces):
            con.execute(
                "INSERT INTO rung_results (trace_id, rung, rung_name, status, scores, explanation, "
                f"evaluator_version) VALUES (?, 3, 'aa_plugin', 'pass', {maps[k % len(maps)]}, '', ?)",
                [trace_id, version],
            )
    finally:
        con.close()
    done = cli("report", "bulk", "--db", str(db), "--format", "json")
    assert done.returncode == 0, done.stderr
    reported = json.loads(done.stdout)["summary"]["mean_rung_scores"]
    want = _reference(db)
    assert list(reported) == [key for key, _ in want]
    # the report gives 4 decimals; sums made in another order than SQL's agree to far better
    assert [reported[key] for key, _ in want] == pytest.approx([value for _, value in want], abs=5.1e-5)
    assert "aa_plugin.b" in reported and "aa_plugin.c" in reported
