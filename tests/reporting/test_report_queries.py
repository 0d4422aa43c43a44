"""What the text report's summary asks DuckDB (issue 36 point 1): the case-level relation is read
in few queries (decision 600), and not built at all for a run without multi-turn cases, whose
case runs are its traces (decision 601) — with the same figures either way.

The statements are recorded on the store's real DuckDB connection, wrapped so that every call
goes through to it unchanged; the store is a real judged bulk store.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from bulk_store import bulk_store
from conftest import cli
from recorded_connection import RecordedConnection

from traceladder.store.case_level import case_level
from traceladder.store.db import Store
from traceladder.store.report_summary import Aggregates, aggregates
from traceladder.store.run_report import scope_of_run


@pytest.fixture(scope="module")
def judged(tmp_path_factory) -> Path:
    """400 judged bulk traces of run `bulk` (several failure classes, no multi-turn case)."""
    db = tmp_path_factory.mktemp("report-queries") / "bulk.duckdb"
    bulk_store(db, 400)
    done = cli("evaluate", "--db", str(db))
    assert done.returncode == 0, done.stderr
    return db


def _summary(db: Path) -> tuple[Aggregates, list[str]]:
    with Store(db, read_only=True) as store:
        recorded = RecordedConnection(store.conn)
        store.conn = recorded  # type: ignore[assignment]
        try:
            agg = aggregates(store, scope_of_run(store, "bulk"))
        finally:
            store.conn = recorded._conn
    return agg, recorded.statements


def test_the_summary_reads_the_case_runs_in_three_queries(judged):
    agg, statements = _summary(judged)
    assert len(agg.classes) >= 2  # several classes: each used to cost a query of its own
    reads = [s for s in statements if "FROM scored" in s]
    assert len(reads) <= 3, reads


def test_a_run_without_turns_does_not_build_the_case_level_relation(judged):
    _, statements = _summary(judged)
    assert not [s for s in statements if case_level("scoped") in s]


def test_a_run_with_turns_is_counted_by_case_run_as_before(judged, tmp_path):
    """Two traces made the turns of one case run (whose conversation has no verdict yet): the
    summary builds the case-level relation again and counts them as one NOT_EVALUATED case run."""
    before, _ = _summary(judged)
    db = tmp_path / "turns.duckdb"
    db.write_bytes(judged.read_bytes())
    with Store(db) as store:
        first, second = (r[0] for r in store.fetchall(
            "SELECT trace_id FROM trace_results WHERE run_id = 'bulk' ORDER BY trace_id LIMIT 2"
        ))  # fmt: skip
        for turn, trace in enumerate((first, second)):
            store.execute(
                "INSERT INTO case_turns (run_id, case_id, repeat_index, turn, trace_id, agent_status) "
                "VALUES ('bulk', 'two-turns', 0, ?, ?, 'ok')",
                [turn, trace],
            )
    after, statements = _summary(db)
    assert [s for s in statements if case_level("scoped") in s]

    def count(agg: Aggregates, verdict: str | None = None) -> int:
        return sum(n for _, v, n in agg.verdicts if verdict in (None, v))

    assert count(after) == count(before) - 1
    assert count(after, "NOT_EVALUATED") == count(before, "NOT_EVALUATED") + 1
