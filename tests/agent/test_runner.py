"""The suite runner end to end: a real DuckDB file, the real openai client, real HTTP servers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.conftest import ROOT, as_foreground, cli, rows
from tests.scripted_server import ModelServer, OtlpCollector
from traceladder.produce.agent.client import choose_model
from traceladder.produce.agent.config import AgentConfig
from traceladder.produce.agent.runner import RunOptions, run_suite
from traceladder.store import Store
from traceladder.suite.cases import load_cases

SECRET = "sk-traceladder-test-SECRET-4242"


@pytest.fixture(scope="module")
def oracle_db(oracle_suite):
    return oracle_suite


def test_oracle_run_writes_every_case(oracle_db):
    db, result = oracle_db
    assert "run_id=run-" in result.stdout and f"db={db}" in result.stdout
    assert rows(db, "SELECT count(*), count(DISTINCT trace_id) FROM case_runs") == [(72, 72)]
    assert rows(db, "SELECT status, model, provider FROM runs") == [
        ("complete", "sim:oracle", "traceladder.sim")
    ]
    assert rows(db, "SELECT DISTINCT agent_status FROM case_runs") == [("ok",)]


def test_sql_over_tool_calls_returns_each_golden_call(oracle_db):
    db, _ = oracle_db
    found = rows(
        db,
        "SELECT cr.case_id, tc.ordinal, tc.tool_name, tc.arguments FROM tool_calls tc "
        "JOIN case_runs cr USING (trace_id) ORDER BY cr.case_id, tc.ordinal",
    )
    actual: dict[str, list] = {}
    for case_id, ordinal, tool, arguments in found:
        actual.setdefault(case_id, []).append((ordinal, tool, json.loads(arguments)))
    for case in load_cases():
        expected = [(i, c.tool, c.params) for i, c in enumerate(case.calls, 1)]
        assert actual.get(case.id, []) == expected, case.id


def test_faulty_run_keeps_invalid_json_arguments_raw(faulty_suite):
    """Read from the session's shared 72-case sim:faulty run (seed 0): what the runner stored is
    the subject, and any seed that injects an invalid-JSON fault shows it."""
    db = faulty_suite[0]
    found = rows(
        db,
        "SELECT tc.arguments_raw, tc.arguments, tc.error_type, cr.expected_label->>'verdict' "
        "FROM tool_calls tc JOIN case_runs cr USING (trace_id) "
        "WHERE cr.expected_label->>'fault' = 'invalid_json' AND tc.ordinal = 1",
    )
    assert found, "seed 0 injects at least one invalid-JSON fault"
    for raw, parsed, error_type, verdict in found:
        assert parsed is None and error_type == "invalid_json" and verdict == "FAIL"
        with pytest.raises(ValueError):
            json.loads(raw)
        assert raw.startswith('{"')
    labels = rows(db, "SELECT count(*) FROM case_runs WHERE expected_label IS NOT NULL")
    assert labels == [(72,)]


def test_default_model_is_the_simulator_and_says_so(tmp_path):
    db = tmp_path / "d.duckdb"
    result = cli("run", "--db", str(db), "--case", "fc-d1-001", "--no-report")
    assert result.returncode == 0
    assert "no model configured" in result.stderr and "sim:faulty" in result.stderr
    assert rows(db, "SELECT model FROM runs") == [("sim:faulty",)]


@pytest.mark.parametrize(
    "quirk",
    [
        "args_object",
        "missing_ids",
        "repeated_ids",
        "text_with_calls",
        "finish_stop",
        "null_content",
    ],
)
def test_server_quirks_are_tolerated(tmp_path, retail, quirk):
    ids = ("fc-d4-001", "fc-d2-004", "fc-d3-001", "fc-d1-013")
    with Store(tmp_path / "q.duckdb") as store:
        choice = choose_model(f"sim:oracle+{quirk}", None)
        summary = run_suite(
            store, choice, AgentConfig(model=choice.model), RunOptions(case_ids=ids), domain=retail
        )
        assert summary.agent_errors == 0 and summary.finished == 4
        rows = store.fetchall(
            "SELECT cr.case_id, list(tc.tool_name ORDER BY tc.ordinal), list(tc.call_id ORDER BY tc.ordinal),"
            " list(tc.status ORDER BY tc.ordinal), any_value(cr.final_text) "
            "FROM case_runs cr LEFT JOIN tool_calls tc USING (trace_id) GROUP BY cr.case_id ORDER BY 1"
        )
    by_case = {r[0]: r[1:] for r in rows}
    tools, call_ids, statuses, final = by_case["fc-d4-001"]
    assert tools == ["request_cancel", "confirm_action"] and statuses == ["ok", "ok"]
    assert len(set(call_ids)) == 2 and all(call_ids)
    assert by_case["fc-d2-004"][0] == ["request_return"]
    assert by_case["fc-d3-001"][0] == [None]  # no calls
    # the simulator states the facts the tool results hold (the judge's rung checks them)
    expected_final = "" if quirk == "null_content" else "操作ACT-001（request_cancel）状态：confirmed。"
    assert final == expected_final


def test_real_http_model_retries_429_then_succeeds_and_never_leaks_the_key(tmp_path):
    server = ModelServer(failures=[429, 429])
    db = tmp_path / "h.duckdb"
    with server:
        result = cli(
            "run", "--model", "test-model", "--base-url", server.url, "--case", "fc-d1-001", "--db", str(db),
            "--no-report", env={"OPENAI_API_KEY": SECRET},
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert len(server.requests) == 4  # 429, 429, 200 (tool call), 200 (answer)
    assert rows(db, "SELECT agent_status, steps FROM case_runs") == [("ok", 2)]
    assert rows(db, "SELECT provider, base_url_host FROM runs") == [("openai", "127.0.0.1")]
    _assert_no_secret(db, result)


def test_endless_500s_end_as_agent_error_and_the_batch_continues(tmp_path):
    cases = {c.id: c for c in load_cases()}
    server = ModelServer(always_fail={cases["fc-d1-001"].instruction})
    db = tmp_path / "e.duckdb"
    with server:
        result = cli(
            "run", "--model", "test-model", "--base-url", server.url, "--case", "fc-d1-001", "--case", "fc-d1-004",
            "--retry-attempts", "3", "--db", str(db), "--no-report", env={"OPENAI_API_KEY": SECRET},
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    found = rows(db, "SELECT case_id, agent_status, error_type FROM case_runs ORDER BY 1")
    assert found == [("fc-d1-001", "error", "api_error"), ("fc-d1-004", "ok", None)]
    agent = rows(
        db,
        "SELECT s.status_code, s.error_type FROM spans s JOIN case_runs cr USING (trace_id) "
        "WHERE cr.case_id = 'fc-d1-001' AND s.operation = 'invoke_agent'",
    )
    assert agent == [("ERROR", "api_error")]
    chat = rows(
        db,
        "SELECT s.error_type FROM spans s JOIN case_runs cr USING (trace_id) "
        "WHERE cr.case_id = 'fc-d1-001' AND s.operation = 'chat'",
    )
    assert chat == [("http_500",)]
    _assert_no_secret(db, result)


def _assert_no_secret(db, result):
    assert SECRET not in result.stdout and SECRET not in result.stderr
    for path in db.parent.iterdir():
        assert SECRET.encode() not in path.read_bytes(), path


def test_spans_also_reach_an_otlp_collector(tmp_path):
    collector = OtlpCollector()
    db = tmp_path / "o.duckdb"
    with collector:
        result = cli(
            "run", "--model", "sim:oracle", "--case", "fc-d4-001", "--db", str(db), "--no-report",
            env={"OTEL_EXPORTER_OTLP_ENDPOINT": collector.url},
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    names = collector.span_names()
    assert sorted(names) == sorted(n for (n,) in rows(db, "SELECT name FROM spans"))
    assert "execute_tool confirm_action" in names and "invoke_agent traceladder-agent" in names


def test_max_steps_ends_the_case_as_agent_error(tmp_path, retail):
    from traceladder.produce.agent.sim.plans import build_fault

    case = next(c for c in load_cases() if c.id == "fc-d1-001")
    assert build_fault(case, retail, "endless_loop").label["verdict"] == "AGENT_ERROR"
    with Store(tmp_path / "m.duckdb") as store:
        seed = next(s for s in range(200) if _fault(retail, case, s) == "endless_loop")
        choice = choose_model("sim:faulty", None)
        config = AgentConfig(model=choice.model, max_steps=3, sim_seed=seed)
        run_suite(store, choice, config, RunOptions(case_ids=("fc-d1-001",)), domain=retail)
        assert store.fetchall("SELECT agent_status, error_type, steps FROM case_runs") == [
            ("error", "max_steps", 3)
        ]


def _fault(retail, case, seed):
    from traceladder.produce.agent.sim.plans import faulty_plan

    return faulty_plan(case, retail, seed).label["fault"]


def test_unknown_case_and_bad_flags_exit_2(tmp_path):
    result = cli("run", "--case", "fc-d9-001", "--db", str(tmp_path / "x.duckdb"))
    assert result.returncode == 2 and "unknown case fc-d9-001" in result.stderr
    result = cli(
        "run",
        "--model",
        "gpt-4o-mini",
        "--db",
        str(tmp_path / "x.duckdb"),
        env={"OPENAI_API_KEY": ""},
    )
    assert result.returncode == 2 and "needs OPENAI_API_KEY" in result.stderr


def start_slow_run(db, until: str, *selection: str) -> subprocess.Popen:
    """A suite run (or `selection` of it) in a subprocess (slowed down), returned once its progress
    shows `until`."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "traceladder", "run", "--model", "sim:oracle", "--db", str(db),
         "--sim-delay", "0.05", "--concurrency", "2", "--no-report", *selection],
        cwd=ROOT, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True, preexec_fn=as_foreground,
        env={k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"},
    )  # fmt: skip
    assert proc.stderr is not None
    deadline = time.monotonic() + 120
    for line in proc.stderr:
        if line.startswith(until) or time.monotonic() > deadline:
            break
    return proc


def test_sigkill_keeps_finished_cases_and_resume_completes(tmp_path):
    """D1's 18 cases, not the suite's 72: killed after 6, the resume still has to run every case
    the dead process did not finish, and only those."""
    db = tmp_path / "k.duckdb"
    proc = start_slow_run(db, "[6/18]", "--dimension", "D1")
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate()  # reap it and close the pipes
    with Store(db) as store:  # a new writer: the dead run becomes "interrupted"
        ((run_id, status),) = store.fetchall("SELECT run_id, status FROM runs")
        finished = store.fetchall("SELECT count(*) FROM case_runs")[0][0]
        orphans = store.fetchall(
            "SELECT count(*) FROM case_runs cr WHERE NOT EXISTS "
            "(SELECT 1 FROM spans s WHERE s.trace_id = cr.trace_id AND s.operation = 'invoke_agent')"
        )[0][0]
    assert status == "interrupted"
    assert 6 <= finished < 18
    assert orphans == 0  # every finished case has its whole trace
    result = cli("run", "--resume", run_id, "--db", str(db), "--no-report")
    assert result.returncode == 0, result.stderr
    assert rows(db, "SELECT status FROM runs") == [("complete",)]
    assert rows(db, "SELECT count(*), count(DISTINCT case_id) FROM case_runs") == [(18, 18)]
    assert f"[{finished + 1}/18]" in result.stderr


def test_ctrl_c_marks_the_run_interrupted_and_keeps_finished_cases(tmp_path):
    db = tmp_path / "c.duckdb"
    proc = start_slow_run(db, until="[5/72]")
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted" in err
    status = rows(db, "SELECT status FROM runs")
    finished = rows(db, "SELECT count(*) FROM case_runs")[0][0]
    assert status == [("interrupted",)] and 5 <= finished < 72
