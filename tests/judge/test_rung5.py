"""Rung 5 end to end: a real `traceladder evaluate` against a scripted judge on 127.0.0.1 — who
reaches the judge, the cache, the budget, an unusable judge, the judge's spans and cost."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import cli, cli_in_process, rows
from scripted_server import JudgeServer
from shared_suites import built_once, digest, session_folder

PRICES = '[models."judge-1"]\ninput = 1.0\noutput = 2.0\n'  # USD per 1M tokens
CALL_COST = (100 * 1.0 + 20 * 2.0) / 1_000_000  # the scripted judge reports 100 in / 20 out


@pytest.fixture(scope="session")
def suite_db(tmp_path_factory) -> Iterator[Path]:
    """One sim:faulty run (seed 0), stored but not yet judged: built once per test session, in
    process (set-up, not the subject), and only copied (`db`); checked unchanged at the end."""
    folder = session_folder(tmp_path_factory) / "rung5-suite"
    db = folder / "run.duckdb"

    def build() -> dict[str, str]:
        assert cli_in_process("run", "--db", str(db), "--seed", "0", "--no-report").returncode == 0
        return {"sha256": digest(db)}

    built = built_once(folder, build)
    yield db
    assert digest(db) == built["sha256"], f"a test wrote to the shared store {db}"


@pytest.fixture
def db(suite_db, tmp_path) -> Path:
    copy = tmp_path / "store.duckdb"
    shutil.copy(suite_db, copy)
    return copy


def judge_args(server: JudgeServer, tmp_path: Path, *extra: str) -> list[str]:
    prices = tmp_path / "prices.toml"
    prices.write_text(PRICES)
    return ["--judge-model", "judge-1", "--judge-base-url", server.url, "--judge-prices", str(prices), *extra]


def code_verdicts(db: Path) -> dict[str, str]:
    """case id → the verdict the code rungs alone give (set-up: in process)."""
    assert cli_in_process("evaluate", "--db", str(db), "--no-judge").returncode == 0
    return dict(rows(db, "SELECT case_id, verdict FROM trace_results"))


def instructions() -> dict[str, str]:
    from traceladder.suite.cases.loader import load_cases

    return {c.instruction: c.id for c in load_cases()}


def test_only_survivors_reach_the_judge_and_each_call_is_a_costed_span(db, tmp_path):
    before = code_verdicts(db)
    with JudgeServer("pass") as server:
        done = cli("evaluate", "--db", str(db), *judge_args(server, tmp_path))
    assert done.returncode == 0, done.stderr
    sent = {instructions()[t["instruction"]] for t in server.trajectories}
    survivors = {case for case, verdict in before.items() if verdict == "PASS"}
    assert sent == survivors and survivors  # every survivor, and nothing a code rung settled
    assert len(server.trajectories) == len(sent)  # one call per distinct trajectory
    for t in server.trajectories:  # the whole trajectory: calls with results, and the answer
        assert t["final_answer"] and all(
            {"tool", "arguments", "ok", "result"} <= c.keys() for c in t["calls"]
        )
    triaged = rows(db, "SELECT count(*) FROM rung_results WHERE rung_name = 'judge' AND status = 'skipped'")
    assert triaged == [(sum(v == "FAIL" for v in before.values()),)]
    spans = rows(
        db,
        "SELECT attributes->>'$.\"gen_ai.operation.name\"', attributes->>'$.\"gen_ai.usage.input_tokens\"', "
        "links->0->>'trace_id', trace_id FROM spans WHERE source = 'judge'",
    )
    judged = dict(rows(db, "SELECT trace_id, judge_trace_id FROM trace_judgments WHERE outcome = 'judged'"))
    assert len(spans) == len(server.trajectories)
    assert all(op == "chat" and tokens == "100" and judged[link] == own for op, tokens, link, own in spans)
    units = rows(db, "SELECT count(*) FROM trace_results")
    assert units == [(len(before),)]  # the judge's own traces are never judged
    (cost,) = rows(db, "SELECT sum(cost_usd) FROM trace_judgments")[0]
    assert cost == pytest.approx(len(spans) * CALL_COST)
    assert f"judge: calls={len(spans)} cache_hits=0" in done.stderr


def test_a_rerun_is_served_from_the_cache_with_identical_results(db, tmp_path):
    with JudgeServer("pass") as server:
        first = cli("evaluate", "--db", str(db), *judge_args(server, tmp_path))
        results = rows(db, "SELECT trace_id, rung_name, status, explanation FROM rung_results ORDER BY ALL")
        asked = len(server.trajectories)
        again = cli("evaluate", "--db", str(db), *judge_args(server, tmp_path))
        assert len(server.trajectories) == asked  # zero judge calls
        assert rows(db, "SELECT trace_id, rung_name, status, explanation FROM rung_results ORDER BY ALL") == [
            r if r[1] != "judge" else (*r[:3], r[3].replace("judge judge-1:", "judge judge-1 (cached):"))
            for r in results
        ]
        assert f"calls=0 cache_hits={asked}" in again.stderr
        fresh = cli("evaluate", "--db", str(db), "--no-cache", *judge_args(server, tmp_path))
        assert len(server.trajectories) == 2 * asked and fresh.returncode == 0
    assert first.returncode == again.returncode == 0


def test_the_budget_stops_judging_cleanly_and_the_report_says_so(db, tmp_path):
    with JudgeServer("pass") as server:
        done = cli("evaluate", "--db", str(db), "--judge-budget", "3", *judge_args(server, tmp_path))
    assert done.returncode == 0 and len(server.trajectories) == 3
    left = rows(
        db,
        "SELECT g.status, g.explanation FROM rung_results g JOIN trace_judgments j USING (trace_id) "
        "WHERE j.outcome = 'over_budget' AND g.rung_name = 'judge'",
    )
    assert left and all(s == "not_evaluated" and "judge budget (3 calls) was spent" in e for s, e in left)
    report = cli("report", "--db", str(db), "--format", "json")
    judge = json.loads(report.stdout)["summary"]["judge"]
    assert judge["judge_calls"] == 3 and judge["over_budget"] == len(left)
    assert cli("evaluate", "--db", str(db), "--judge-budget", "lots", "--no-judge").returncode == 2
    with JudgeServer("pass") as server:  # 120 tokens a call: the third call reaches 360 > 250
        args = judge_args(
            server, tmp_path, "--judge-budget", "250tokens", "--judge-concurrency", "1", "--no-cache"
        )
        assert cli("evaluate", "--db", str(db), *args).returncode == 0
    assert len(server.trajectories) == 3


@pytest.mark.parametrize("mode", ["garbage", "html"])
def test_an_unusable_judge_is_a_recorded_error_never_a_pass_or_a_crash(db, tmp_path, mode):
    before = code_verdicts(db)
    with JudgeServer(mode) as server:
        done = cli("evaluate", "--db", str(db), *judge_args(server, tmp_path))
    assert done.returncode == 0 and "Traceback" not in done.stderr
    distinct = len({json.dumps(t, sort_keys=True) for t in server.trajectories})
    assert len(server.trajectories) == 2 * distinct  # each asked twice: once, then the one retry
    errors = rows(db, "SELECT error FROM trace_judgments WHERE outcome = 'error'")
    assert len(errors) == sum(v == "PASS" for v in before.values())
    assert all("(after 2 attempts)" in e for (e,) in errors)
    judged = rows(
        db, "SELECT status, explanation FROM rung_results WHERE rung_name = 'judge' AND status <> 'skipped'"
    )
    assert judged and all(s == "not_evaluated" and "judge error" in e for s, e in judged)
    assert rows(db, "SELECT count(*) FROM judgments") == [(0,)]  # an error is never cached


def test_one_unparsable_reply_is_retried_and_then_judged(db, tmp_path):
    with JudgeServer("garbage_once") as server:
        assert cli("evaluate", "--db", str(db), *judge_args(server, tmp_path)).returncode == 0
    assert set(rows(db, "SELECT attempts FROM judgments")) == {(2,)}
    assert rows(db, "SELECT count(*) FROM trace_judgments WHERE outcome <> 'judged'") == [(0,)]


def test_an_unreachable_judge_with_credentials_in_its_url_leaks_nothing(db):
    url = "http://judge-user:s3cr3t-token@127.0.0.1:9/v1"  # port 9: nothing listens
    done = cli("evaluate", "--db", str(db), "--judge-model", "judge-1", "--judge-base-url", url)
    assert done.returncode == 0 and "s3cr3t" not in done.stdout + done.stderr
    assert "errors=" in done.stderr and "Traceback" not in done.stderr
    stored = rows(db, "SELECT string_agg(coalesce(error, ''), ' ') FROM trace_judgments")[0][0]
    spans = rows(db, "SELECT string_agg(attributes::VARCHAR, ' ') FROM spans WHERE source = 'judge'")[0][0]
    assert "s3cr3t" not in (stored or "") + (spans or "") and "(connection)" in stored


def test_a_server_that_refuses_optional_fields_is_asked_without_them(db, tmp_path):
    with JudgeServer("plain") as server:
        done = cli("evaluate", "--db", str(db), "--judge-concurrency", "1", *judge_args(server, tmp_path))
    assert done.returncode == 0, done.stderr
    first, second, third, *rest = server.requests
    assert "response_format" in first and "seed" in first  # asked for structured output, then …
    assert "response_format" not in second and "seed" in second  # … without it, then without the seed
    assert "response_format" not in third and "seed" not in third
    assert rest and all("response_format" not in r and "seed" not in r for r in rest)  # never again
    assert all(r["temperature"] == 0 for r in server.requests)
    assert rows(db, "SELECT DISTINCT outcome FROM trace_judgments") == [("judged",)]
