"""The workflows behind `ingest`, `serve`, `gate`, `baseline`, `compare`, `consistency`,
`selfcheck` and `cases from-traces` take typed requests: called in process, without a parser.
A request a workflow refuses is a one-line `UserError` before anything is opened or written."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from traceladder.errors import UserError
from traceladder.receive.serve.handler import ReceiverConfig
from traceladder.receive.serve.server import ServeOptions
from traceladder.store.db import open_store
from traceladder.store.recorded import Selection
from traceladder.workflows.baseline_files import CheckRequest, check_baseline
from traceladder.workflows.compare_runs import CompareRequest, compare
from traceladder.workflows.consistency_record import ConsistencyRequest, consistency_of
from traceladder.workflows.from_traces import FromTracesRequest, record_suite
from traceladder.workflows.gate_run import GateRequest, run_gate
from traceladder.workflows.ingest import IngestRequest, ingest_files
from traceladder.workflows.judge_selfcheck import JudgeSelfcheckRequest
from traceladder.workflows.run import RunRequest, run
from traceladder.workflows.selfcheck import SelfcheckRequest, run_selfcheck
from traceladder.workflows.serve import serve

CASES = ("fc-d1-001", "fc-d2-001", "fc-d3-001")


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    db = tmp_path_factory.mktemp("runs") / "store.duckdb"
    with open_store(db) as store:
        ids = [run(store, RunRequest(model="sim:oracle", case_ids=CASES)).summary.run_id for _ in range(3)]
    return db, ids


def test_compare_consistency_and_gate_answer_typed_requests(three_runs, tmp_path):
    db, (a, b, c) = three_runs
    compared = compare(db, CompareRequest((a,), (b, c)))
    assert compared.comparison["schema"] == "ComparisonV1" and compared.b_worse is False
    assert compared.comparison["paired_cases"] == len(CASES)
    record = consistency_of(db, ConsistencyRequest((a, b, c))).record
    assert record["runs"] == [a, b, c] and record["cases"] == len(CASES) and record["flaky_cases"] == []
    junit = tmp_path / "junit.xml"
    gated = run_gate(db, GateRequest(run_id=a, min_pass_rate=0.5, junit=junit), stdout=io.StringIO())
    assert gated.run_id == a and gated.outcome.exit_code == 0 and gated.comment is None
    assert junit.read_text().startswith("<?xml")


def test_refused_requests_open_nothing(tmp_path):
    db = tmp_path / "never.duckdb"
    refusals = [
        (lambda: ingest_files(db, IngestRequest(("-", "-")), on_problem=print), "- (stdin) can be named once"),
        (lambda: run_gate(db, GateRequest(min_pass_rate=0.9, comment=True), stdout=io.StringIO()), "give --baseline FILE"),
        (lambda: run_selfcheck(SelfcheckRequest((1, 1), "retail", db=db)), "lists a seed twice"),
        (lambda: run_selfcheck(JudgeSelfcheckRequest("retail", rounds=0)), "--rounds must be at least 1"),
        (lambda: record_suite(db, FromTracesRequest(Selection(()), tmp_path / "out", prefix="Bad"), print), "--prefix"),
        (lambda: record_suite(db, FromTracesRequest(Selection(()), tmp_path / "out"), print), "no store at"),
        (lambda: serve(_serve_options(db, token=" ")), "--token cannot be empty"),
    ]  # fmt: skip
    for call, said in refusals:
        with pytest.raises(UserError) as refused:
            call()
        assert said in str(refused.value)
        assert not db.exists() and not (tmp_path / "out").exists()


def test_a_baseline_check_without_a_store_checks_the_file_alone(tmp_path):
    missing = tmp_path / "baseline.json"
    with pytest.raises(UserError):  # the file is read first: a missing one is a user's error
        check_baseline(tmp_path / "none.duckdb", CheckRequest(missing))
    assert not (tmp_path / "none.duckdb").exists()


def _serve_options(db: Path, *, token: str | None) -> ServeOptions:
    return ServeOptions(db, "127.0.0.1", 0, ReceiverConfig(1 << 20, token), 1, 1000, 1.0)
