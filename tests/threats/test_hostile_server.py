"""A hostile or broken model server never becomes a verdict (issue 9: points 1, 2, 13, 14).

Every test talks to a real HTTP server on 127.0.0.1 through the real `openai` client and the real
CLI, and reads the outcome back from the DuckDB file.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys

import pytest

from tests.conftest import ROOT, as_foreground, cli, cli_in_process, out_value, rows
from tests.scripted_server import ModelServer, Reply, chat_reply
from traceladder.produce.agent.client import choose_model
from traceladder.produce.agent.config import AgentConfig
from traceladder.produce.agent.runner import RunOptions, run_suite
from traceladder.store import Store
from traceladder.suite.cases import load_cases

CASES = {c.id: c for c in load_cases()}
NO_KEY = {"OPENAI_API_KEY": "k-test"}


def run_against(url, db, *args, timeout=120):
    return cli("run", "--model", "m", "--base-url", url, "--db", str(db), *args, env=NO_KEY, timeout=timeout)


UNUSABLE = {
    "html": (Reply(body=b"<html>Welcome to nginx!</html>", content_type="text/html"), "response_not_json"),
    "empty": (Reply(body=b""), "response_empty"),
    "truncated": (Reply(body=b'{"id":"x","choices":[{"index":0,"message":{"role":'), "response_not_json"),
    "invalid_utf8": (Reply(body=b'{"id":"\xff\xfe","choices":[]}'), "response_not_utf8"),
    "choices_empty": (
        Reply(body=b'{"id":"x","object":"chat.completion","choices":[]}'),
        "response_no_choices",
    ),
    "no_choices_key": (Reply(body=b'{"id":"x","object":"chat.completion"}'), "response_no_choices"),
    "null_choice": (Reply(body=b'{"id":"x","choices":[null]}'), "response_invalid_choice"),
    "json_string": (Reply(body=b'"hello"'), "response_not_json"),
    "cut_by_the_cap": (
        chat_reply({"role": "assistant", "content": "I will now"}, "length"),
        "response_truncated",
    ),
}


@pytest.mark.parametrize("name", sorted(UNUSABLE))
def test_an_unusable_response_is_an_agent_error_on_its_own_trace(tmp_path, name):
    reply, error_type = UNUSABLE[name]
    server = ModelServer(override=lambda body: reply)
    db = tmp_path / "u.duckdb"
    with server:
        result = run_against(server.url, db, "--case", "fc-d3-001", "--retry-attempts", "1")
    assert result.returncode == 2, result.stderr  # the only case is AGENT_ERROR: nothing measured
    assert "agent_errors=1" in result.stdout and "nothing was measured" in result.stderr
    assert f"AGENT_ERROR {error_type}" in result.stderr  # the progress line names the error type
    found = rows(db, "SELECT trace_id, agent_status, error_type FROM case_runs")
    assert len(found) == 1 and found[0][0] and found[0][1:] == ("error", error_type)
    agent = rows(db, "SELECT status_code, error_type FROM spans WHERE operation = 'invoke_agent' AND trace_id = ?",
                  [found[0][0]])  # fmt: skip
    assert agent == [("ERROR", error_type)]
    report = json.loads(cli_in_process("report", "--db", str(db), "--format", "json").stdout)  # read-back
    assert report["summary"]["verdict_counts"] == {"PASS": 0, "FAIL": 0, "SKIP": 0, "AGENT_ERROR": 1}


def test_an_nginx_page_never_passes_a_dont_call_case(tmp_path):
    """The issue's reproduction: every D3 case against an HTML 200 used to PASS."""
    server = ModelServer(override=lambda body: UNUSABLE["html"][0])
    db = tmp_path / "n.duckdb"
    with server:
        # --stop-after-errors 0: see all 18 through (by default the 5th in a row stops the run)
        result = run_against(server.url, db, "--dimension", "D3", "--stop-after-errors", "0")
    assert result.returncode == 2, result.stderr  # every case AGENT_ERROR: nothing was measured
    assert "agent_errors=18" in result.stdout
    run_id = out_value(result, "run_id")
    report = json.loads(
        cli_in_process("report", run_id, "--db", str(db), "--format", "json").stdout
    )  # read-back
    assert report["summary"]["verdict_counts"]["AGENT_ERROR"] == 18
    assert report["summary"]["verdict_counts"]["PASS"] == 0
    joined = rows(
        db,
        "SELECT count(*) FROM case_runs cr JOIN results r USING (trace_id) WHERE r.verdict = 'AGENT_ERROR'",
    )
    assert joined == [(18,)]


class _BrokenSandbox:
    def execute(self, tool, arguments):
        raise RuntimeError("a plug-in domain's sandbox crashed")

    def ledger(self):
        return ()


def test_an_unexpected_exception_in_the_loop_is_recorded_on_its_trace(tmp_path, retail):
    broken = dataclasses.replace(retail, sandbox_factory=_BrokenSandbox)
    with Store(tmp_path / "x.duckdb") as store:
        choice = choose_model("sim:oracle", None)
        summary = run_suite(store, choice, AgentConfig(model=choice.model), RunOptions(case_ids=("fc-d1-001",)),
                            domain=broken)  # fmt: skip
        rows = store.fetchall(
            "SELECT cr.agent_status, cr.error_type, cr.error_message, s.status_code, s.error_type "
            "FROM case_runs cr JOIN spans s ON s.trace_id = cr.trace_id AND s.operation = 'invoke_agent'"
        )
    assert summary.agent_errors == 1
    assert rows == [("error", "internal_error", "RuntimeError: a plug-in domain's sandbox crashed", "ERROR",
                     "internal_error")]  # fmt: skip


def _trickle_for(instruction):
    """The case with this instruction gets headers, then one byte every 2 s, forever."""
    return lambda body: Reply(trickle_s=2.0) if body["messages"][1]["content"] == instruction else None


def test_the_case_timeout_is_a_wall_clock_limit_and_a_stuck_case_blocks_nothing(tmp_path):
    server = ModelServer(override=_trickle_for(CASES["fc-d1-001"].instruction))
    db = tmp_path / "t.duckdb"
    with server:
        # Without a wall-clock deadline this run never ends; the subprocess timeout fails the test.
        result = run_against(server.url, db, "--case", "fc-d1-001", "--case", "fc-d1-004", "--timeout", "3",
                             "--no-report", timeout=90)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert rows(db, "SELECT case_id, agent_status, error_type FROM case_runs ORDER BY 1") == [
        ("fc-d1-001", "error", "timeout"),
        ("fc-d1-004", "ok", None),
    ]


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_ctrl_c_and_sigterm_stop_a_run_with_a_stuck_request(tmp_path, sig, code):
    server = ModelServer(override=_trickle_for(CASES["fc-d1-001"].instruction))
    db = tmp_path / "s.duckdb"
    with server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "traceladder", "run", "--model", "m", "--base-url", server.url, "--db", str(db),
             "--case", "fc-d1-001", "--case", "fc-d1-004", "--concurrency", "2", "--no-report"],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=as_foreground, env={**os.environ, **NO_KEY},
        )  # fmt: skip
        assert proc.stderr is not None
        for line in proc.stderr:  # wait until the good case is done; the other one is stuck
            if line.startswith("[1/2]"):
                break
        proc.send_signal(sig)
        # The stuck case must not hold the run: without abandoning it, this times out.
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == code, err
    assert "interrupted" in err and "--resume" in err and "Traceback" not in err
    assert rows(db, "SELECT status FROM runs") == [("interrupted",)]
    assert rows(db, "SELECT case_id, agent_status FROM case_runs") == [("fc-d1-004", "ok")]


def test_a_token_cap_is_sent_and_recorded(tmp_path):
    server = ModelServer()
    db = tmp_path / "c.duckdb"
    with server:
        result = run_against(server.url, db, "--case", "fc-d1-001", "--max-tokens", "321", "--no-report")
    assert result.returncode == 0, result.stderr
    assert all(body["max_tokens"] == 321 and "max_completion_tokens" not in body for body in server.requests)
    config = json.loads(rows(db, "SELECT config FROM runs")[0][0])
    assert config["max_tokens"] == 321 and config["token_param"] == "auto"
    chat = rows(
        db,
        "SELECT DISTINCT attributes->>'$.\"gen_ai.request.max_tokens\"' FROM spans WHERE operation = 'chat'",
    )
    assert chat == [("321",)]


def test_a_server_that_refuses_max_tokens_gets_max_completion_tokens(tmp_path):
    def newer_api(body):
        if "max_tokens" in body:
            message = "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens'."
            return Reply(
                status=400,
                body=json.dumps({"error": {"message": message, "type": "invalid_request_error"}}).encode(),
            )
        return None

    server = ModelServer(override=newer_api)
    db = tmp_path / "n.duckdb"
    with server:
        result = run_against(server.url, db, "--case", "fc-d4-001", "--no-report")
    assert result.returncode == 0, result.stderr
    assert rows(db, "SELECT agent_status FROM case_runs") == [("ok",)]
    sent = [("max_tokens" in b, "max_completion_tokens" in b) for b in server.requests]
    assert sent[0] == (True, False)  # refused once …
    assert set(sent[1:]) == {(False, True)}  # … then every request of the run uses the other field


def test_a_read_timeout_is_retried_once_not_by_the_whole_policy(tmp_path):
    """A server that is slow while generating is not asked to generate the same minute again
    and again: one retry, then the case ends as a timeout."""
    server = ModelServer(override=lambda body: Reply(delay_s=3.0, body=b"{}"))
    db = tmp_path / "r.duckdb"
    with server:
        result = cli("run", "--model", "m", "--base-url", server.url, "--db", str(db), "--case", "fc-d1-001",
                     "--retry-attempts", "6", "--retry-base-delay", "0", "--timeout", "60",
                     "--request-timeout", "1", "--no-report", env=NO_KEY)  # fmt: skip
    assert result.returncode == 2, result.stderr  # the only case is AGENT_ERROR: nothing measured
    assert len(server.requests) == 2
    assert rows(db, "SELECT agent_status, error_type FROM case_runs") == [("error", "timeout")]
    chat = rows(db, "SELECT error_type FROM spans WHERE operation = 'chat'")
    assert chat == [("read_timeout",)]


def test_progress_names_the_error_type(tmp_path):
    server = ModelServer(always_fail={CASES["fc-d1-001"].instruction})
    db = tmp_path / "p.duckdb"
    with server:
        result = run_against(server.url, db, "--case", "fc-d1-001", "--retry-attempts", "1", "--no-report")
    assert "[1/1] fc-d1-001 AGENT_ERROR api_error (http_500)" in result.stderr


def test_a_lone_surrogate_in_a_models_arguments_is_recorded_and_judged(tmp_path):
    """JSON lets a model send `"\\ud800"`, which decodes to text UTF-8 cannot hold. The argument
    reaches the sandbox, spans, a finding, the terminal and the JSON report: the run completes, the
    case is judged, and every store and file holds it (lone surrogates as U+FFFD)."""
    bad = '{"order_id": "W\\ud800"}'  # the JSON text the model sends: an escape, not a character

    def first_call_is_bad(body):
        if any(m["role"] == "tool" for m in body["messages"]):
            return chat_reply({"role": "assistant", "content": "Order W\ud800 was not found."})
        call = {"id": "c1", "type": "function", "function": {"name": "get_order", "arguments": bad}}
        return chat_reply({"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls")

    db = tmp_path / "s.duckdb"
    with ModelServer(override=first_call_is_bad) as server:
        result = run_against(server.url, db, "--case", "fc-d1-001")
    assert result.returncode == 0, result.stderr
    assert "status=complete cases=1/1" in result.stdout
    ((verdict,),) = rows(db, "SELECT verdict FROM trace_results")
    assert verdict == "FAIL"
    calls = rows(db, "SELECT tool_name, arguments_raw, result FROM tool_calls")
    assert [(name, raw) for name, raw, _ in calls] == [("get_order", bad)]  # the model's text, as sent
    # the sandbox's answer, stored: the validator reads the lone surrogate as U+FFFD (decision 380)
    assert "invalid_arguments" in calls[0][2] and "W\ufffd" in json.loads(calls[0][2])["error"]["message"]
    actual = rows(db, "SELECT actual FROM findings WHERE param = 'order_id'")
    assert actual and all(json.loads(a) == "W\ufffd" for (a,) in actual)
