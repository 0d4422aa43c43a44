"""Evaluation from the store, reports, and the judge's own correctness (oracle, selfcheck)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from tests.conftest import cli, cli_in_process, rows
from traceladder.store import DuckDBSpanExporter, Store
from traceladder.workflows.selfcheck import compare_labels, selfcheck


@pytest.fixture(scope="module")
def oracle_run(oracle_suite):
    db, result = oracle_suite
    lines = dict(
        line.split("=", 1)
        for line in result.stdout.splitlines()
        if "=" in line and " " not in line.split("=")[0]
    )
    return db, lines, result


def test_oracle_run_is_72_of_72_pass(oracle_run):
    db, lines, result = oracle_run
    assert set(lines) >= {"run_id", "db", "report_path"}
    report = json.loads(Path(lines["report_path"]).read_text(encoding="utf-8"))
    s = report["summary"]
    assert s["verdict_counts"] == {"PASS": 72, "FAIL": 0, "SKIP": 0, "AGENT_ERROR": 0}
    assert s["scored_count"] == 72 and s["accuracy"] == 1.0
    assert {d: b["accuracy"] for d, b in s["dimensions"].items()} == {
        "D1": 1.0,
        "D2": 1.0,
        "D3": 1.0,
        "D4": 1.0,
    }
    assert "accuracy 100.0%" in result.stdout


def test_report_formats(oracle_run, tmp_path):
    db, lines, _ = oracle_run
    as_json = cli("report", lines["run_id"], "--db", str(db), "--format", "json")
    report = json.loads(as_json.stdout)
    assert set(report["summary"]) >= {
        "verdict_counts", "scored_count", "accuracy", "dimensions", "taxonomy_counts", "top_failures",
        "worst_tools", "top_worst_tools", "mean_rung_scores",
    }  # fmt: skip
    case = next(r for r in report["results"] if r["case_id"] == "fc-d4-001")
    assert [c["tool"] for c in case["actual"]] == ["request_cancel", "confirm_action"]
    assert case["golden"][1]["param_rules"] == {"action_id": "any"}
    assert [r["rung"] for r in case["rungs"]] == [1, 1, 2, 3, 4, 4, 5]  # tiers 1 and 4 hold two rungs each
    junit = cli("report", "--db", str(db), "--format", "junit", "--output", str(tmp_path / "j.xml"))
    assert junit.returncode == 0
    suite = ET.parse(tmp_path / "j.xml").getroot().find("testsuite")
    assert suite is not None and suite.get("tests") == "72" and suite.get("failures") == "0"
    text = cli("report", "--db", str(db))
    assert "Verdicts by dimension" in text.stdout and "D4" in text.stdout


def test_faulty_report_explains_failures(faulty_suite):
    """The session's shared sim:faulty run (FAILs and AGENT_ERRORs); `report` only reads it."""
    db, _ = faulty_suite
    report = json.loads(cli_in_process("report", "--db", str(db), "--format", "json").stdout)
    s = report["summary"]
    assert s["verdict_counts"]["AGENT_ERROR"] > 0  # so the junit <error> count below means something
    assert (
        s["verdict_counts"]["FAIL"] > 0 and sum(s["taxonomy_counts"].values()) == s["verdict_counts"]["FAIL"]
    )
    failed = [r for r in report["results"] if r["verdict"] == "FAIL"]
    assert all(r["explanation"].startswith("FAIL at rung") and r["findings"] for r in failed)
    junit = ET.fromstring(cli("report", "--db", str(db), "--format", "junit").stdout)
    failures = junit.findall(".//failure")
    assert len(failures) == s["verdict_counts"]["FAIL"]
    assert all(f.get("message", "").startswith("FAIL at rung") for f in failures)
    errors = junit.findall(".//error")
    assert len(errors) == s["verdict_counts"]["AGENT_ERROR"]


def test_re_evaluation_replaces_results(oracle_run, tmp_path):
    db, lines, _ = oracle_run
    copy = tmp_path / "copy.duckdb"
    copy.write_bytes(db.read_bytes())
    for _ in range(2):
        assert cli("evaluate", "--db", str(copy), "--run", lines["run_id"]).returncode == 0
    assert rows(copy, "SELECT count(*), count(DISTINCT case_id) FROM results") == [(72, 72)]
    result = cli("evaluate", "--db", str(copy), "--run", "run-nope")
    assert result.returncode == 2 and "no traces of run run-nope" in result.stderr


def test_traces_from_elsewhere_are_judged(tmp_path):
    """Spans from another agent, tagged with a case id, judged with the same code."""
    db = tmp_path / "x.duckdb"
    with Store(db) as store:
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(DuckDBSpanExporter(store, source="otlp")))
        tracer = provider.get_tracer("someone-elses-agent")
        for case_id, order in (("fc-d1-001", "W441"), ("fc-d1-002", "W499")):
            root = {"traceladder.case.id": case_id, "traceladder.run.id": "prod-sample"}
            with tracer.start_as_current_span("agent turn", attributes=root):
                tool = {
                    "gen_ai.tool.name": "get_order",
                    "gen_ai.tool.call.arguments": json.dumps({"order_id": order}),
                }
                with tracer.start_as_current_span("tools/call get_order", attributes=tool):
                    pass
        provider.shutdown()
    assert cli("evaluate", "--db", str(db)).returncode == 0
    found = rows(db, "SELECT run_id, case_id, verdict, failure_class FROM results ORDER BY case_id")
    assert found == [
        ("prod-sample", "fc-d1-001", "PASS", None),
        ("prod-sample", "fc-d1-002", "FAIL", "PARAM_HALLUCINATED_ID"),
    ]
    assert rows(db, "SELECT convention FROM tool_calls LIMIT 1") == [("otel_genai",)]


def test_selfcheck_cli_reports_zero_misjudgments():
    """The command runs and judges the whole suite with a seed no other test uses and prints a
    zero rate. One seed, not two: zero misjudgments over a whole suite is also proven for seed 5
    by the next test and for seed 1 through the installed wheel (tests/project/test_package.py),
    and a case suite smaller than the domain's 72 is refused, so each seed costs a full run."""
    result = cli("selfcheck", "--seeds", "11")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "misjudgment_rate=0.0000 (0/72)" in result.stdout


def test_selfcheck_catches_a_disagreement(tmp_path, retail):
    with Store(tmp_path / "s.duckdb") as store:
        check = selfcheck(store, retail, [5])
        assert check.disagreements == () and check.judged == 72
        run_id = store.fetchall("SELECT run_id FROM runs")[0][0]
        store.execute(
            'UPDATE case_runs SET expected_label = \'{"fault": "x", "verdict": "PASS", "failure_class": null}\' '
            "WHERE case_id = 'fc-d2-001'"
        )
        tampered = compare_labels(store, [run_id])
    assert [d.case_id for d in tampered.disagreements] == ["fc-d2-001"]
    assert tampered.misjudgment_rate > 0


def test_report_without_results_is_a_clear_error(tmp_path):
    db = tmp_path / "n.duckdb"
    assert (
        cli("run", "--model", "sim:oracle", "--case", "fc-d1-001", "--db", str(db), "--no-report").returncode
        == 0
    )
    result = cli("report", "--db", str(db))
    assert result.returncode == 2 and "has no results" in result.stderr
    result = cli("report", "--db", str(tmp_path / "missing.duckdb"))
    assert result.returncode == 2 and "no store at" in result.stderr


def test_parallel_judging_equals_serial(faulty_suite, tmp_path, retail):
    """The process pool is an optimisation only: identical rows to judging in-process."""
    from traceladder.evaluate.assemble import build_context
    from traceladder.evaluate.pool import SettlePool
    from traceladder.evaluate.rungs.ladder import Ladder
    from traceladder.store.readers import read_call_table, read_units

    db = tmp_path / "p.duckdb"  # a copy of the session's 72-case sim:faulty run: Store() opens it to write
    db.write_bytes(faulty_suite[0].read_bytes())
    with Store(db) as store:
        units = read_units(store, None)
        calls = read_call_table(store, [u.trace_id for u in units])
    ctx = build_context(units, Ladder())
    outputs = []
    for workers in (1, 2):
        with SettlePool(ctx, workers=workers, min_parallel=0) as pool:
            pool.submit(units, calls)
            outputs.append(list(pool.results()))
    serial, parallel = outputs
    assert len(parallel) == 2  # really split over two workers
    for name in ("traces", "rungs", "findings"):
        serial_rows = getattr(serial[0], name).to_pylist()
        parallel_rows = [row for part in parallel for row in getattr(part, name).to_pylist()]
        for row in serial_rows + parallel_rows:
            row.pop("evaluated_at", None)
        assert parallel_rows == serial_rows, name
