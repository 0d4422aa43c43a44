"""Migration 015_result_notes (decision 630): a store written before the ladder kept a result's
reason apart from its note gets the reason of every row it already holds, by the rule the HTML
report applied to those rows until then, so its pages read the same after the upgrade."""

from __future__ import annotations

import duckdb

from traceladder.evaluate.rungs.types import not_evaluated_note
from traceladder.store import Store
from traceladder.store.migrations import MIGRATIONS

NOTE = not_evaluated_note(["invariants"])
# (trace id, verdict, explanation as the ladder wrote it before 015, the rungs not evaluated on it)
WRITTEN = [
    ("a" * 32, "PASS", "all 1 golden call(s) matched" + NOTE, ["invariants"]),
    ("b" * 32, "PASS", "réponse → 2 calls matched" + not_evaluated_note(["state", "invariants"]),
     ["state", "invariants"]),
    # its own words end like a note, but every rung ran: nothing was appended, nothing is taken off
    ("c" * 32, "PASS", "the user asked about 'x' (not evaluated: invariants)", []),
    ("d" * 32, "FAIL", "FAIL at rung 2 (call_match): CALL_MISSING: get_order: missing call", ["invariants"]),
    ("e" * 32, "PASS", "all 2 golden call(s) matched", []),
    ("f" * 32, "PASS", None, ["invariants"]),
]  # fmt: skip
RUNGS = {"schema": 1, "call_match": 2, "state": 5, "invariants": 6}


def _old_store(path) -> None:
    """A store exactly as traceladder wrote it before migration 015: every earlier migration, and
    results rows the way the ladder wrote them then."""
    with duckdb.connect(str(path)) as conn:
        conn.execute("CREATE TABLE schema_migrations (name VARCHAR PRIMARY KEY, applied_at TIMESTAMP)")
        for name, sql in MIGRATIONS[: [n for n, _ in MIGRATIONS].index("015_result_notes")]:
            conn.execute(sql)
            conn.execute("INSERT INTO schema_migrations VALUES (?, now())", [name])
        for trace_id, verdict, explanation, missing in WRITTEN:
            conn.execute(
                "INSERT INTO trace_results (trace_id, verdict, explanation, evaluator_version) "
                "VALUES (?, ?, ?, '2.1.0')",
                [trace_id, verdict, explanation],
            )
            for name, rung in RUNGS.items():  # written in no particular order: the report orders them
                status = "not_evaluated" if name in missing else "pass"
                conn.execute(
                    "INSERT INTO rung_results (trace_id, rung, rung_name, status, evaluator_version) "
                    "VALUES (?, ?, ?, ?, '2.1.0')",
                    [trace_id, rung, name, status],
                )


def test_an_older_store_gets_each_results_reason(tmp_path):
    db = tmp_path / "old.duckdb"
    _old_store(db)
    with Store(db) as store:
        assert store.applied_migrations()[-1] == "015_result_notes"
        got = dict(store.fetchall("SELECT trace_id, reason FROM trace_results"))
        explanations = dict(store.fetchall("SELECT trace_id, explanation FROM trace_results"))
    assert got == {
        "a" * 32: "all 1 golden call(s) matched",
        "b" * 32: "réponse → 2 calls matched",
        "c" * 32: None,  # NULL: the explanation is the reason
        "d" * 32: None,
        "e" * 32: None,
        "f" * 32: None,
    }
    assert explanations == {t: e for t, _, e, _ in WRITTEN}  # the explanations are kept as written
