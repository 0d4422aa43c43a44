"""Rows written in one `INSERT … SELECT` from Arrow (`store.bulk.insert_rows`, decision 652) are
the rows the per-row statements wrote: the same values read back, NULLs, timestamps, verdict
members and every column the insert does not name at its default, through the two writers that
use it — a run made from traces (`add_case_runs`) and the conversations' verdicts
(`write_results`). A lone surrogate is stored as U+FFFD, as the result tables store it."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from traceladder.evaluate.rungs.types import VerdictValue
from traceladder.store import Store
from traceladder.store.bulk import insert_rows
from traceladder.store.conversation_results import ConversationRow, write_results
from traceladder.store.trace_runs import TraceCaseRun, add_case_runs


def test_a_run_from_traces_writes_every_case_run(tmp_path: Path):
    rows = [
        TraceCaseRun(f"case-{i % 7}", i // 7, f"{i:032x}", None if i % 3 else "dim", "ok" if i % 5 else "error",
                     None if i % 5 else "Timeout", None if i % 4 == 0 else i / 8)
        for i in range(3000)
    ]  # fmt: skip
    with Store(tmp_path / "s.duckdb") as store:
        add_case_runs(store, "run-1", rows)
        read = store.fetchall(
            "SELECT case_id, repeat_index, trace_id, dimension, agent_status, error_type, latency_ms, "
            "run_id, error_message, steps, expected_label, finished_at IS NOT NULL FROM case_runs "
            "ORDER BY trace_id"
        )
    assert read == [(*r.__dict__.values(), "run-1", None, None, None, True) for r in rows]


def test_a_duplicate_case_run_is_refused_and_nothing_is_written(tmp_path: Path):
    row = TraceCaseRun("c", 0, "t" * 32, None, "ok", None, 1.0)
    with Store(tmp_path / "s.duckdb") as store:
        with pytest.raises(Exception, match="(?i)constraint|duplicate"):
            add_case_runs(store, "run-1", [row, row])
        assert store.fetchall("SELECT count(*) FROM case_runs") == [(0,)]


def test_conversation_verdicts_and_findings(tmp_path: Path):
    rows = [
        ConversationRow(f"conv-{i}", VerdictValue.FAIL if i % 2 else VerdictValue.PASS, i % 3 or None,
                        f"reason {i}", 2 + i % 4, [(t, "GOAL_MISSED", f"turn {t} of {i}", None) for t in range(i % 3)])
        for i in range(500)
    ]  # fmt: skip
    with Store(tmp_path / "s.duckdb") as store:
        with store.transaction() as conn:
            write_results(conn, rows)
        results = store.fetchall(
            "SELECT conversation_id, verdict, deciding_turn, reason, turns, run_id, evaluated_at IS NOT NULL "
            "FROM conversation_results ORDER BY conversation_id"
        )
        findings = store.fetchall(
            "SELECT conversation_id, turn, finding_class, message, rule FROM conversation_findings "
            "ORDER BY conversation_id, turn"
        )
    by_id = sorted(rows, key=lambda r: r.conversation_id)
    assert results == [(r.conversation_id, str(r.verdict), r.deciding_turn, r.reason, r.turns, None, True)
                       for r in by_id]  # fmt: skip
    assert findings == [(r.conversation_id, *f) for r in by_id for f in r.findings]


def test_a_lone_surrogate_is_stored_as_the_replacement_character(tmp_path: Path):
    when = datetime(2026, 12, 3, 12, 0)
    with Store(tmp_path / "s.duckdb") as store:
        with store.transaction() as conn:
            insert_rows(
                conn,
                "conversation_results",
                ("conversation_id", "verdict", "reason", "turns", "evaluated_at"),
                [("c1", "FAIL", "quoted \ud800 here", 2, when), ("c2", "PASS", "fine", 3, when)],
            )
        assert store.fetchall(
            "SELECT conversation_id, reason, evaluated_at FROM conversation_results ORDER BY 1"
        ) == [
            ("c1", "quoted \ufffd here", when),
            ("c2", "fine", when),
        ]


def test_no_rows_write_nothing(tmp_path: Path):
    with Store(tmp_path / "s.duckdb") as store:
        with store.transaction() as conn:
            insert_rows(conn, "conversation_findings", ("conversation_id",), [])
        assert store.fetchall("SELECT count(*) FROM conversation_findings") == [(0,)]
