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


def _summary(db: Path) -> tuple[Aggregates, list[str], str]:
    """The summary of run `bulk`, the statements it asked, and the text of its case-level relation
    (`store.case_level` over the scope's rows)."""
    with Store(db, read_only=True) as store:
        recorded = RecordedConnection(store.conn)
        store.conn = recorded  # type: ignore[assignment]
        try:
            scope = scope_of_run(store, "bulk")
            agg = aggregates(store, scope)
        finally:
            store.conn = recorded._conn
    return agg, recorded.statements, case_level(scope.rows)


@pytest.fixture(scope="module")
def with_turns(judged, tmp_path_factory) -> Path:
    """`judged` where two traces made the turns of one case run (whose conversation has no
    verdict yet)."""
    db = tmp_path_factory.mktemp("report-queries-turns") / "turns.duckdb"
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
    return db


def test_the_summary_reads_the_case_runs_in_three_queries(with_turns):
    agg, statements, case_runs = _summary(with_turns)
    assert len(agg.classes) >= 2  # several classes: each used to cost a query of its own
    reads = [s for s in statements if case_runs in s]
    assert 0 < len(reads) <= 3, reads


def test_a_run_without_turns_does_not_build_the_case_level_relation(judged):
    _, statements, case_runs = _summary(judged)
    assert not [s for s in statements if case_runs in s]


def test_a_run_with_turns_is_counted_by_case_run_as_before(judged, with_turns):
    """The two turns are counted as one NOT_EVALUATED case run."""
    before, _, _ = _summary(judged)
    after, _, _ = _summary(with_turns)

    def count(agg: Aggregates, verdict: str | None = None) -> int:
        return sum(n for _, v, n in agg.verdicts if verdict in (None, v))

    assert count(after) == count(before) - 1
    assert count(after, "NOT_EVALUATED") == count(before, "NOT_EVALUATED") + 1


def test_a_store_without_judgments_or_conversations_is_not_asked_about_them(judged):
    """What a store holds of judge verdicts, multi-turn case runs and conversations of several
    turns is asked once, of the whole store (decision 760); the scope is asked only about what
    the store holds."""
    agg, statements, _ = _summary(judged)
    assert (agg.judgments, agg.conversations) == (None, {})
    reads = [s for s in statements if "trace_judgments" in s or "conversations" in s]
    assert len(reads) == 1 and "EXISTS" in reads[0], reads


def test_judgments_of_the_scope_are_counted_once_the_store_holds_any(judged, tmp_path):
    """One judgment of a trace of another run: the store holds judgments, the scope none (still
    no judge figures); one of a trace of the scope: counted."""
    db = tmp_path / "judged.duckdb"
    db.write_bytes(judged.read_bytes())
    insert = (
        "INSERT INTO trace_judgments (trace_id, outcome, judge_model, input_tokens, output_tokens, "
        "cost_usd, judge_trace_id, evaluated_at) VALUES (?, 'judged', 'sim:judge', 10, 5, 0.25, 'j1', now())"
    )
    with Store(db) as store:
        store.execute(insert, ["a trace of no run of this store"])
    assert _summary(db)[0].judgments is None
    with Store(db) as store:
        (trace,) = store.fetchall("SELECT trace_id FROM trace_results WHERE run_id = 'bulk' LIMIT 1")[0]
        store.execute(insert, [trace])
    judgments = _summary(db)[0].judgments
    assert judgments is not None
    assert (judgments["survivors"], judgments["judge_calls"], judgments["cost_usd"]) == (1, 1, 0.25)


def test_the_evaluator_version_is_the_first_results(judged, tmp_path):
    """Every trace of one version: that one, read from the counts (no top-N of the scope in report
    order). Traces of several versions: the first result's in report order, whether it is the
    least or the greatest."""
    agg, statements, _ = _summary(judged)
    with Store(judged, read_only=True) as store:
        (only,) = {r[0] for r in store.fetchall("SELECT DISTINCT evaluator_version FROM trace_results")}
    assert agg.evaluator_version == only
    assert not [s for s in statements if "LIMIT 1" in s and "evaluator_version" in s]
    db = tmp_path / "versions.duckdb"
    first = (
        "SELECT trace_id FROM trace_results WHERE run_id = 'bulk' ORDER BY case_id, repeat_index, trace_id"
    )
    for version_of_first, others in (("v-first", "v-other"), ("v-a", "v-b"), ("v-b", "v-a")):
        db.unlink(missing_ok=True)
        db.write_bytes(judged.read_bytes())
        with Store(db) as store:
            (trace,) = store.fetchall(first + " LIMIT 1")[0]
            store.execute(
                "UPDATE trace_results SET evaluator_version = ? WHERE trace_id <> ?", [others, trace]
            )
            store.execute(
                "UPDATE trace_results SET evaluator_version = ? WHERE trace_id = ?", [version_of_first, trace]
            )
        assert _summary(db)[0].evaluator_version == version_of_first
