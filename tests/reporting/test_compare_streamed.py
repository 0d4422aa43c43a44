"""`compare` reads the two sides' results a batch at a time, joined by case in SQL (issue 36,
decision 480): its document and its text are the ones the pure builder writes from the whole
reports in memory (`report.comparison.compare_sides` over `load_report`, what `compare` itself
did before and what the HTML page's paired section still does on small runs).

The store is `bulk_store.judged_runs_store`'s three judged runs of the retail suite (each trace a
repeat of its case), then edited so every branch of the pairing is taken: trials that are SKIP,
NOT_EVALUATED and AGENT_ERROR, a result without a repeat index, a case only one side ran, a case
with no scored trial on one side, a result without a case, and a side of two runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bulk_store import judged_runs_store
from conftest import cli

from traceladder.report.comparison import compare_sides
from traceladder.report.comparison_text import render_comparison
from traceladder.store.db import Store
from traceladder.workflows.compare_runs import _dimensions
from traceladder.workflows.report_files import load_report

RUNS = ("bulk", "bulk-b", "bulk-c")


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("compare-streamed") / "store.duckdb"
    judged_runs_store(path, 1_500, RUNS)
    with Store(path) as store, store.transaction() as conn:
        cases = [
            r[0] for r in conn.execute("SELECT DISTINCT case_id FROM trace_results ORDER BY 1").fetchall()
        ]
        assert len(cases) >= 8, cases

        def edit(sql: str, case: str, run: str) -> None:
            conn.execute(sql, {"case": case, "run": run})

        where = "WHERE case_id = $case AND run_id = $run"
        # some trials that are no trial (SKIP, NOT_EVALUATED) or one that did not pass (AGENT_ERROR)
        edit(f"UPDATE trace_results SET verdict = 'SKIP' {where} AND repeat_index = 0", cases[0], "bulk")
        edit(
            f"UPDATE trace_results SET verdict = 'NOT_EVALUATED' {where} AND repeat_index < 2",
            cases[1],
            "bulk-b",
        )
        edit(
            f"UPDATE trace_results SET verdict = 'AGENT_ERROR', failure_class = NULL {where}",
            cases[2],
            "bulk-b",
        )
        edit(f"UPDATE trace_results SET verdict = 'PASS', failure_class = NULL {where}", cases[3], "bulk")
        edit(f"UPDATE trace_results SET verdict = 'PASS', failure_class = NULL {where}", cases[3], "bulk-c")
        edit(f"UPDATE trace_results SET repeat_index = NULL {where} AND repeat_index = 1", cases[4], "bulk")
        # a case side A never ran, a case B has no scored trial of, a result without a case
        for run in ("bulk", "bulk-c"):
            for table in ("trace_results", "case_runs"):
                edit(f"DELETE FROM {table} {where}", cases[5], run)
            conn.execute(
                "UPDATE runs SET cases_total = (SELECT count(*) FROM case_runs WHERE run_id = $run) "
                "WHERE run_id = $run",
                {"run": run},
            )
        edit(f"UPDATE trace_results SET verdict = 'SKIP' {where}", cases[6], "bulk-b")
        edit(f"UPDATE trace_results SET case_id = NULL {where} AND repeat_index = 0", cases[7], "bulk-b")
    return path


def _reference(db: Path, a: tuple[str, ...], b: tuple[str, ...]) -> dict:
    """The comparison as the pure builder makes it from the whole reports in memory."""
    with Store(db, read_only=True) as store:
        side_a = [load_report(store, r) for r in a]
        side_b = [load_report(store, r) for r in b]
        domain = side_a[0]["run"].get("domain")
        return compare_sides(side_a, side_b, dimensions=_dimensions(domain, side_a[0]))


@pytest.mark.parametrize(("a", "b"), [(("bulk", "bulk-c"), ("bulk-b",)), (("bulk-b",), ("bulk",))])
def test_the_streamed_comparison_is_the_whole_reports_comparison(db, a, b):
    expected = _reference(db, a, b)
    assert expected["flips"] and expected["only_a"] + expected["only_b"] and expected["unpaired"]
    assert len(expected["k"]) > 1 and len(expected["classes"]) > 2  # the edits took effect
    done = cli("compare", ",".join(a), ",".join(b), "--db", str(db), "--format", "json")
    assert done.returncode in (0, 1), done.stderr
    assert json.loads(done.stdout) == json.loads(json.dumps(expected))
    text = cli("compare", ",".join(a), ",".join(b), "--db", str(db))
    assert text.stdout == render_comparison(json.loads(done.stdout))
