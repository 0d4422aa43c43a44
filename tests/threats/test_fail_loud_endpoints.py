"""A misconfigured endpoint never looks like a result (issue "Fail loud, never stall", points 1-3).

Real CLI in a subprocess, real sockets on 127.0.0.1, the real `openai` client, the store read back.
Every test also points HTTP(S)_PROXY at a closed local port (127.0.0.1 itself exempt), so a request
meant for a real provider fails on this machine instead of leaving it.
"""

from __future__ import annotations

import socket

import pytest

from tests.conftest import cli, rows
from tests.scripted_server import JudgeServer, ModelServer, Reply, StatusServer, chat_reply
from traceladder.suite.cases import load_cases

CASES = {c.id: c for c in load_cases()}
SECRET = "sk-test-s3cr3t-never-shown"
OR_SECRET = "sk-or-test-0penr0uter-key"
SIX = ["fc-d1-001", "fc-d1-002", "fc-d1-003", "fc-d1-004", "fc-d1-005", "fc-d2-001"]
DEAD = "http://127.0.0.1:9"  # nothing listens on the discard port
GUARD = {"HTTP_PROXY": DEAD, "HTTPS_PROXY": DEAD, "NO_PROXY": "127.0.0.1,localhost"}
NO_KEYS = {
    "OPENAI_API_KEY": "",
    "OPENROUTER_API_KEY": "",
    "OPENAI_BASE_URL": "",
    "TRACELADDER_JUDGE_API_KEY": "",
}


def env(**extra: str) -> dict[str, str]:
    return {**GUARD, **NO_KEYS, **extra}


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(url: str, db, *args: str, **keys: str):
    return cli("run", "--model", "m", "--base-url", url, "--db", str(db), "--retry-attempts", "1",
               "--retry-base-delay", "0", *args, env=env(**keys), timeout=120)  # fmt: skip


def one_line(result) -> str:
    lines = [line for line in result.stderr.splitlines() if not line.startswith("[")]  # progress lines aside
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


# --- point 1: the endpoint is checked before the first case ------------------------------------


def test_a_refused_connection_stops_before_the_first_case(tmp_path):
    port = closed_port()
    db = tmp_path / "r.duckdb"
    result = run(f"http://user:{SECRET}@127.0.0.1:{port}/v1?api-key={SECRET}", db, "--case", "fc-d1-001")
    assert result.returncode == 2, result.stderr
    line = one_line(result)
    assert "connection refused" in line and f"127.0.0.1:{port}/v1" in line
    assert SECRET not in result.stdout + result.stderr
    assert rows(db, "SELECT count(*) FROM runs") == [(0,)]  # nothing was recorded


def test_a_tls_failure_is_named(tmp_path):
    """https:// to a plain-HTTP server: the handshake fails, and the line says so."""
    with ModelServer() as server:
        result = run(server.url.replace("http://", "https://"), tmp_path / "t.duckdb", "--case", "fc-d1-001")
    assert result.returncode == 2, result.stderr
    assert "TLS failed" in one_line(result)


@pytest.mark.parametrize(("status", "words"), [(401, "refused the API key (401"), (403, "(403 Forbidden")])
def test_a_refused_key_stops_before_the_first_case_and_names_the_key(tmp_path, status, words):
    server = StatusServer(status)
    db = tmp_path / "k.duckdb"
    with server:
        result = run(server.url, db, "--case", "fc-d1-001", OPENAI_API_KEY=SECRET)
    assert result.returncode == 2, result.stderr
    line = one_line(result)
    assert words in line and "the key came from OPENAI_API_KEY" in line
    assert SECRET not in result.stdout + result.stderr
    assert server.methods == ["GET"]  # the check, and not a single chat request
    assert rows(db, "SELECT count(*) FROM runs") == [(0,)]


def test_a_server_without_a_models_route_still_runs(tmp_path):
    """ModelServer answers 404 to GET /models: that is no route, not "model not found"."""
    server = ModelServer()
    db = tmp_path / "n.duckdb"
    with server:
        result = run(server.url, db, "--case", "fc-d1-001", "--no-report")
    assert result.returncode == 0, result.stderr
    assert rows(db, "SELECT agent_status FROM case_runs") == [("ok",)]


def test_a_chat_404_before_any_case_worked_stops_the_run_and_resume_finishes_it(tmp_path):
    """GET /models answers 404 (no route: proves nothing); the first chat request's 404 does."""
    missing = Reply(status=404, body=b'{"error": {"message": "The model m does not exist"}}')
    server = ModelServer(override=lambda body: missing)
    db = tmp_path / "m.duckdb"
    picks = [arg for cid in SIX for arg in ("--case", cid)]
    with server:
        result = run(server.url, db, *picks, "--concurrency", "1")
        assert result.returncode == 2, result.stderr
        line = one_line(result)
        assert "404 Not Found to a chat request: model 'm'" in line and "--resume" in line
        # stopped at the first chat request (the one case queued behind it is abandoned)
        assert len(server.requests) <= 2
        ((run_id, status),) = rows(db, "SELECT run_id, status FROM runs")
        assert status == "interrupted"
        assert rows(db, "SELECT count(*) FROM case_runs") == [(0,)]  # the failed case runs again
        server.override = None  # the model is served now
        resumed = cli("run", "--resume", run_id, "--base-url", server.url, "--db", str(db), "--no-report",
                      env=env(), timeout=120)  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    assert rows(db, "SELECT case_id, agent_status FROM case_runs ORDER BY 1") == [
        (c, "ok") for c in sorted(SIX)
    ]


def _fails_after_first(instruction: str):
    """The case with this instruction is answered; every other request gets 503."""
    return lambda body: (
        None if body["messages"][1]["content"] == instruction else Reply(status=503, body=b"{}")
    )


def test_identical_endpoint_errors_in_a_row_stop_the_run_and_resume_runs_the_rest(tmp_path):
    first, *others = SIX
    server = ModelServer(override=_fails_after_first(CASES[first].instruction))
    db = tmp_path / "s.duckdb"
    picks = [arg for cid in [first, *others] for arg in ("--case", cid)]
    with server:
        result = run(server.url, db, *picks, "--concurrency", "1", "--stop-after-errors", "3")
        assert result.returncode == 2, result.stderr
        line = one_line(result)
        assert "after 3 cases in a row ended with http_503" in line
        assert "1 finished case(s) kept, 3 not" in line and "--resume" in line
        ((run_id, status),) = rows(db, "SELECT run_id, status FROM runs")
        assert status == "interrupted"
        assert rows(db, "SELECT case_id, agent_status FROM case_runs") == [(first, "ok")]
        server.override = None  # the endpoint is fixed
        resumed = cli("run", "--resume", run_id, "--base-url", server.url, "--db", str(db), "--no-report",
                      env=env(), timeout=120)  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    found = rows(db, "SELECT case_id, agent_status FROM case_runs ORDER BY 1")
    assert found == [(cid, "ok") for cid in sorted([first, *others])]


def test_a_run_in_which_every_case_is_agent_error_exits_2(tmp_path):
    """Cut off by the token cap every time: a model outcome, not an endpoint error, so the run is
    not stopped — but a run that measured nothing is not a result."""
    server = ModelServer(override=lambda body: chat_reply({"role": "assistant", "content": "I"}, "length"))
    db = tmp_path / "a.duckdb"
    with server:
        result = run(server.url, db, "--case", "fc-d1-001", "--case", "fc-d1-004")
    assert result.returncode == 2, result.stderr
    line = one_line(result)
    assert "every case of run" in line and "AGENT_ERROR" in line and "response_truncated (2 of 2)" in line
    assert "status=complete cases=2/2 agent_errors=2" in result.stdout  # the run itself is kept
    assert rows(db, "SELECT DISTINCT verdict FROM trace_results") == [("AGENT_ERROR",)]


def test_the_progress_line_shows_the_verdict_class_never_ok(tmp_path):
    fails = CASES["fc-d1-001"].instruction
    server = ModelServer(override=lambda b: chat_reply({"role": "assistant", "content": "I"}, "length")
                         if b["messages"][1]["content"] == fails else None)  # fmt: skip
    db = tmp_path / "p.duckdb"
    with server:
        result = run(server.url, db, "--case", "fc-d1-001", "--case", "fc-d1-004", "--no-report")
    assert result.returncode == 0, result.stderr
    progress = sorted(line for line in result.stderr.splitlines() if line.startswith("["))
    assert len(progress) == 2
    by_case = {line.split()[1]: line.split(" ", 2)[2].rsplit(" · eta ", 1)[0] for line in progress}
    assert by_case["fc-d1-001"] == "AGENT_ERROR response_truncated"
    assert (
        by_case["fc-d1-004"].startswith("answered in 2 step(s)")
        and "verdict after evaluation" in by_case["fc-d1-004"]
    )
    assert not any(line.endswith(" ok") for line in progress)


def test_the_progress_line_names_the_request_error(tmp_path):
    server = ModelServer(always_fail={CASES["fc-d1-001"].instruction})
    with server:
        result = run(server.url, tmp_path / "e.duckdb", "--case", "fc-d1-001", "--case", "fc-d1-004",
                     "--concurrency", "1", "--no-report")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "fc-d1-001 AGENT_ERROR api_error (http_500)" in result.stderr


def test_a_simulated_model_makes_no_request(tmp_path):
    """sim:* never checks an endpoint: with every URL variable pointing at a recording server,
    the server hears nothing."""
    server = ModelServer()
    with server:
        result = cli("run", "--model", "sim:oracle", "--case", "fc-d1-001", "--db", str(tmp_path / "s.duckdb"),
                     "--no-report", env=env(OPENAI_BASE_URL=server.url, OPENAI_API_KEY=SECRET,
                                            TRACELADDER_OPENAI_URL=server.url))  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert server.authorizations == [] and server.requests == []


# --- point 2: selfcheck --judge against an unusable judge -----------------------------------------


def test_selfcheck_judge_against_an_unreachable_judge_exits_2_with_the_cause():
    port = closed_port()
    result = cli("selfcheck", "--judge", "--judge-model", "j", "--judge-base-url",
                 f"http://u:{SECRET}@127.0.0.1:{port}/v1", "--rounds", "1", env=env())  # fmt: skip
    assert result.returncode == 2, result.stdout + result.stderr
    line = one_line(result)
    assert "the judge endpoint" in line and "connection refused" in line and f"127.0.0.1:{port}" in line
    assert SECRET not in result.stdout + result.stderr
    assert "accuracy" not in result.stdout  # no figures for a judge that was never asked


def test_selfcheck_judge_with_a_refused_key_names_the_key():
    with JudgeServer("unauthorized") as server:
        result = cli("selfcheck", "--judge", "--judge-model", "j", "--judge-base-url", server.url,
                     "--rounds", "1", env=env(TRACELADDER_JUDGE_API_KEY=SECRET))  # fmt: skip
    assert result.returncode == 2, result.stdout + result.stderr
    line = one_line(result)
    assert "refused the API key (401" in line and "TRACELADDER_JUDGE_API_KEY" in line
    assert SECRET not in result.stdout + result.stderr


def test_selfcheck_judge_that_never_answers_usably_exits_2():
    """Reachable, key accepted, but never the JSON asked for: an unusable judge is not 0%."""
    with JudgeServer("garbage") as server:
        result = cli("selfcheck", "--judge", "--judge-model", "j", "--judge-base-url", server.url,
                     "--rounds", "1", env=env())  # fmt: skip
    assert result.returncode == 2, result.stdout + result.stderr
    assert "gave no usable reply to any of the 48 requests" in one_line(result)


# --- point 3: a key only goes to the host it was issued for -----------------------------------------


def _bearers(server) -> set[str | None]:
    return set(server.authorizations)


def test_the_judge_sends_an_openrouter_key_to_openrouter_not_to_openai():
    """The issue's case: only OPENROUTER_API_KEY, no judge URL. The two provider URLs are local
    stand-ins (TRACELADDER_OPENAI_URL / TRACELADDER_OPENROUTER_URL)."""
    with JudgeServer("pass") as openai_, JudgeServer("pass") as openrouter:
        result = cli("selfcheck", "--judge", "--judge-model", "j", "--rounds", "1",
                     env=env(OPENROUTER_API_KEY=OR_SECRET, TRACELADDER_OPENAI_URL=openai_.url,
                             TRACELADDER_OPENROUTER_URL=openrouter.url))  # fmt: skip
    assert result.returncode in (0, 1), result.stdout + result.stderr
    assert openai_.authorizations == []
    assert openrouter.authorizations and _bearers(openrouter) == {f"Bearer {OR_SECRET}"}


def test_the_judge_at_openrouter_gets_the_openrouter_key_not_the_openai_key():
    with JudgeServer("pass") as openai_, JudgeServer("pass") as openrouter:
        result = cli("selfcheck", "--judge", "--judge-model", "j", "--rounds", "1", "--judge-base-url",
                     openrouter.url, env=env(OPENAI_API_KEY=SECRET, OPENROUTER_API_KEY=OR_SECRET,
                                             TRACELADDER_OPENAI_URL=openai_.url,
                                             TRACELADDER_OPENROUTER_URL=openrouter.url))  # fmt: skip
    assert result.returncode in (0, 1), result.stdout + result.stderr
    assert openai_.authorizations == []
    assert openrouter.authorizations and _bearers(openrouter) == {f"Bearer {OR_SECRET}"}


def test_the_judge_never_sends_the_openai_key_to_another_host():
    with JudgeServer("pass") as openai_, JudgeServer("pass") as elsewhere:
        result = cli("selfcheck", "--judge", "--judge-model", "j", "--rounds", "1", "--judge-base-url",
                     elsewhere.url, env=env(OPENAI_API_KEY=SECRET, TRACELADDER_OPENAI_URL=openai_.url))  # fmt: skip
    assert result.returncode in (0, 1), result.stdout + result.stderr
    assert elsewhere.authorizations and not any(SECRET in (a or "") for a in elsewhere.authorizations)


def test_the_agent_sends_an_openrouter_key_only_to_openrouter(tmp_path):
    openai_, openrouter, elsewhere = ModelServer(), ModelServer(), ModelServer()
    with openai_, openrouter, elsewhere:
        keys = {
            "OPENROUTER_API_KEY": OR_SECRET,
            "TRACELADDER_OPENAI_URL": openai_.url,
            "TRACELADDER_OPENROUTER_URL": openrouter.url,
        }
        default = cli("run", "--model", "m", "--case", "fc-d1-001", "--db", str(tmp_path / "d.duckdb"),
                      "--no-report", env=env(**keys))  # fmt: skip
        local = cli("run", "--model", "m", "--base-url", elsewhere.url, "--case", "fc-d1-001",
                    "--db", str(tmp_path / "l.duckdb"), "--no-report", env=env(**keys))  # fmt: skip
    assert default.returncode == 0, default.stderr
    assert local.returncode == 0, local.stderr
    assert openai_.authorizations == []
    assert openrouter.authorizations and _bearers(openrouter) == {f"Bearer {OR_SECRET}"}
    assert elsewhere.authorizations and not any(OR_SECRET in (a or "") for a in elsewhere.authorizations)
    assert rows(tmp_path / "d.duckdb", "SELECT provider FROM runs") == [("openrouter",)]


def test_the_agent_sends_the_openai_key_to_its_base_url(tmp_path):
    """--base-url is the flag form of OPENAI_BASE_URL: OPENAI_API_KEY is that endpoint's key."""
    server = ModelServer()
    with server:
        result = run(
            server.url, tmp_path / "o.duckdb", "--case", "fc-d1-001", "--no-report", OPENAI_API_KEY=SECRET
        )
    assert result.returncode == 0, result.stderr
    assert _bearers(server) == {f"Bearer {SECRET}"}


@pytest.mark.parametrize(
    ("role", "flag", "keys", "expected"),
    [
        ("JUDGE", None, {"OPENROUTER_API_KEY": "or"}, ("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY")),
        ("JUDGE", None, {"OPENAI_API_KEY": "oa", "OPENROUTER_API_KEY": "or"}, ("https://api.openai.com/v1", "OPENAI_API_KEY")),
        ("JUDGE", "http://127.0.0.1:8000/v1", {"OPENAI_API_KEY": "oa"}, ("http://127.0.0.1:8000/v1", None)),
        ("JUDGE", "http://127.0.0.1:8000/v1", {"OPENAI_API_KEY": "oa", "OPENAI_BASE_URL": "http://127.0.0.1:8000/v1"},
         ("http://127.0.0.1:8000/v1", "OPENAI_API_KEY")),
        ("JUDGE", "http://127.0.0.1:8000/v1", {"TRACELADDER_JUDGE_API_KEY": "j", "OPENAI_API_KEY": "oa"},
         ("http://127.0.0.1:8000/v1", "TRACELADDER_JUDGE_API_KEY")),
        ("AGENT", "http://127.0.0.1:8000/v1", {"OPENROUTER_API_KEY": "or"}, ("http://127.0.0.1:8000/v1", None)),
        ("AGENT", "http://127.0.0.1:8000/v1", {"OPENAI_API_KEY": "oa"}, ("http://127.0.0.1:8000/v1", "OPENAI_API_KEY")),
        ("AGENT", "https://openrouter.ai/api/v1", {"OPENAI_API_KEY": "oa", "OPENROUTER_API_KEY": "or"},
         ("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY")),
        ("AGENT", "http://127.0.0.1:8001/v1", {"OPENAI_API_KEY": "oa", "OPENAI_BASE_URL": "http://127.0.0.1:8000/v1"},
         ("http://127.0.0.1:8001/v1", "OPENAI_API_KEY")),
    ],
)  # fmt: skip
def test_one_rule_picks_url_and_key_for_both_roles(role, flag, keys, expected):
    from traceladder.endpoints import resolve as rule  # here: the original code had no such module

    found = rule.resolve(getattr(rule, role), "m", flag, keys)
    assert (found.url, found.key_source) == expected
    assert found.api_key == (keys[expected[1]] if expected[1] else None)
