"""The judge measured (selfcheck --judge), the simulated judge's rules, the state rung's evidence,
and rung 5 on traces from elsewhere and on a re-run suite."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import ROOT, cli, cli_in_process, rows
from scripted_server import JudgeServer

from traceladder.evaluate.judge.meta import load_meta
from traceladder.evaluate.judge.trajectory import canonical_text

FIXTURES = ROOT / "tests" / "fixtures" / "producers"


def criteria_lines(stdout: str) -> dict[str, dict[str, str]]:
    """`criterion: accuracy=… kappa=… drift=…` lines → {criterion: {key: value}}."""
    found = {}
    for line in stdout.splitlines():
        match = re.match(r"^(\w+): accuracy=(\S+) \((\d+)/(\d+)\) kappa=(\S+) drift=(\S+) \((\d+)/", line)
        if match:
            name, accuracy, agreed, items, kappa, drift, flipped = match.groups()
            found[name] = {"accuracy": accuracy, "agreed": agreed, "items": items, "kappa": kappa,
                           "drift": drift, "flipped": flipped}  # fmt: skip
    return found


def test_selfcheck_judge_measures_the_simulated_judge_against_the_labels():
    done = cli("selfcheck", "--judge", "--rounds", "2")
    assert done.returncode == 0, done.stderr
    assert "sim:judge (the simulated judge: fixed heuristics, not a model): 48 labelled" in done.stdout
    found = criteria_lines(done.stdout)
    assert {k: (v["accuracy"], v["kappa"], v["drift"]) for k, v in found.items()} == {
        "grounded": ("0.812", "0.613", "0.000"),  # 39/48: it misses claims no number or id gives away
        "tool_choice": ("0.833", "0.000", "0.000"),  # it never fails a choice: kappa says so
        "policy": ("0.875", "0.448", "0.000"),
    }
    assert done.stdout.count("DISAGREE ") == sum(int(v["items"]) - int(v["agreed"]) for v in found.values())
    assert "judge_errors=0" in done.stdout


@pytest.fixture(scope="module")
def labels() -> dict[str, dict[str, str]]:
    return {canonical_text(item.trajectory): item.labels for item in load_meta()}


@pytest.mark.parametrize(
    ("mode", "accuracy", "drift", "code"),
    [("labels", "1.000", "0.000", 0), ("flip", "0.000", "0.000", 1), ("flip_every_other", None, "1.000", 1)],
)
def test_selfcheck_judge_sees_a_judge_that_is_wrong_or_flips(labels, mode, accuracy, drift, code):
    with JudgeServer(mode, labels) as server:
        done = cli("selfcheck", "--judge", "--judge-model", "judge-1", "--judge-base-url", server.url,
                   "--rounds", "2", "--min-kappa", "0.5", "--max-drift", "0.1")  # fmt: skip
    assert done.returncode == code, done.stderr
    found = criteria_lines(done.stdout)
    assert set(found) == {"grounded", "tool_choice", "policy"} and len(server.trajectories) == 2 * 48
    for stats in found.values():
        assert stats["drift"] == drift and (accuracy is None or stats["accuracy"] == accuracy)
        if mode == "labels":
            assert stats["kappa"] == "1.000"
        if mode == "flip":
            assert float(stats["kappa"]) < 0  # worse than chance
        if mode == "flip_every_other":
            assert stats["flipped"] == "48"


def test_the_simulated_judge_checks_the_facts_the_answer_states():
    from traceladder.evaluate.judge.sim import grounded

    result = {"order_id": "W441", "status": "delivered", "total": 757.0}
    trajectory = {"instruction": "查一下W441", "calls": [{"tool": "get_order", "arguments": {"order_id": "W441"},
                                                         "ok": True, "result": result}]}  # fmt: skip
    for answer, verdict in [
        ("订单W441当前状态为delivered，订单金额757.0元。", "pass"),
        ("订单W441当前状态为delivered，订单金额774.0元。", "fail"),  # an amount no result has
        ("订单W441当前状态为shipped，订单金额757元。", "fail"),  # a status no result says
        ("订单W414当前状态为delivered。", "fail"),  # an id no result names
        ("好的，已为您处理。", "pass"),  # claims nothing
    ]:
        assert grounded({**trajectory, "final_answer": answer})[0] == verdict, answer
    failed = {
        **trajectory,
        "calls": [{**trajectory["calls"][0], "ok": False}],
        "final_answer": "好的，已为您处理。",
    }
    assert grounded(failed)[0] == "fail"  # "done" after the last call failed


def test_the_state_rung_catches_a_confirm_that_never_happened(retail):
    """Every call is right, so rungs 1–4 pass; the confirm timed out, so the end state is wrong."""
    from traceladder.evaluate.rungs import DomainRules, Ladder
    from traceladder.evaluate.rungs.inputs import TraceInputs
    from traceladder.evaluate.rungs.schema import SchemaRegistry
    from traceladder.evaluate.rungs.types import Call
    from traceladder.evaluate.state_inputs import golden_states, state_evidence
    from traceladder.produce.agent.loop import ledger_json
    from traceladder.produce.agent.sim.sandbox import FailingOnce
    from traceladder.suite.cases.loader import load_cases

    case = next(c for c in load_cases(retail) if c.id == "fc-d4-016")  # request_refund → confirm
    sandbox = FailingOnce(retail.new_sandbox(), frozenset({"confirm_action"}))
    calls = []
    for n, golden in enumerate(case.calls, 1):
        arguments = dict(golden.params)
        outcome = sandbox.execute(golden.tool, arguments)
        calls.append(Call(golden.tool, arguments, json.dumps(arguments), outcome.ok, outcome.result, n))
    assert not calls[-1].ok  # the confirm was right, and it failed at execution
    absent: dict[str, str] = {}
    state = state_evidence(case, ledger_json(sandbox), golden_states([case], retail), absent)
    inputs = TraceInputs("t", tuple(calls), case, SchemaRegistry(retail.tool_schemas), DomainRules.of(retail),
                         state=state)  # fmt: skip
    verdict = Ladder().settle(inputs)
    by_name = {r.name: r for r in verdict.rungs}
    assert [by_name[n].status for n in ("schema", "call_match", "trajectory", "partial_credit")] == [
        "pass"
    ] * 4
    assert (verdict.verdict, verdict.failure_class, verdict.settled_by) == ("FAIL", "STATE_MISMATCH", "state")
    (finding,) = by_name["state"].findings
    assert (finding.tool, finding.param, finding.expected, finding.actual) == (
        "request_refund", "status", "confirmed", "requested")  # fmt: skip
    assert "ACT-001 request_refund ended requested, expected confirmed" in finding.message
    assert by_name["judge"].status == "skipped"  # a wrong end state never costs a judge call


def test_a_simulated_lost_confirm_is_settled_by_the_state_rung_end_to_end(tmp_path, retail):
    from traceladder.produce.agent.sim.plans import faulty_plan
    from traceladder.suite.cases.loader import load_cases

    seed, case = next((s, c.id) for s in range(50) for c in load_cases(retail)
                      if faulty_plan(c, retail, s).label["fault"] == "lost_confirm")  # fmt: skip
    db = tmp_path / "lost.duckdb"
    assert cli("run", "--db", str(db), "--seed", str(seed), "--case", case).returncode == 0
    found = rows(db, "SELECT rung_name, status FROM rung_results ORDER BY rung, rung_name")
    assert found == [
        ("invariants", "not_evaluated"), ("schema", "pass"), ("call_match", "pass"), ("trajectory", "pass"),
        ("partial_credit", "pass"), ("state", "fail"), ("judge", "skipped")]  # fmt: skip
    assert rows(db, "SELECT verdict, failure_class FROM trace_results") == [("FAIL", "STATE_MISMATCH")]


def test_rerunning_the_suite_asks_the_judge_nothing(tmp_path):
    """One dimension of the suite (18 cases), not all 72 (decision 682): its cases both reach the
    judge and stop below it, which is all the cache and the "avoided by the ladder" count need.
    The first run is set-up (in process); the re-run is the subject (a real process)."""
    db = tmp_path / "eval.duckdb"
    first = cli_in_process("run", "--db", str(db), "--dimension", "D1")
    again = cli("run", "--db", str(db), "--dimension", "D1")
    assert first.returncode == again.returncode == 0
    made = int(re.search(r"judge: calls=(\d+) cache_hits=0", first.stderr).group(1))
    assert made > 0 and f"judge: calls=0 cache_hits={made} " in again.stderr
    assert "Rung 5 (judge sim:judge" in again.stdout and "Judge calls made: 0" in again.stdout
    report = json.loads(Path(re.search(r"^report_path=(.+)$", again.stdout, re.M).group(1)).read_text())
    judge = report["summary"]["judge"]
    assert (judge["judge_calls"], judge["cache_hits"]) == (0, made)
    skipped = report["summary"]["ladder"][-1]["statuses"].get("skipped", 0)
    assert judge["avoided_by_ladder"] == skipped > 0
    judged = rows(db, "SELECT count(*) FROM spans WHERE source = 'judge'")
    assert judged == [(made,)]


def test_traces_from_elsewhere_are_judged_from_their_own_spans_and_events(tmp_path):
    db = tmp_path / "live.duckdb"
    for producer in ("openinference", "otel-openai-v2-default"):  # content on spans; content in events
        scenario = FIXTURES / producer / "parallel"
        files = [str(p) for p in scenario.glob("*.pb")]
        assert cli("ingest", "--db", str(db), *files).returncode == 0
    # openai-v2's spans describe its tools without a schema: rung 1 can only check them against the
    # definitions the agent really had, given as --tools (a NULL schema is never "valid")
    tools = tmp_path / "tools.json"
    tools.write_text(
        json.dumps(
            json.loads((FIXTURES / "openinference" / "parallel" / "expected.json").read_text())[
                "tool_definitions"
            ]
        )
    )
    with JudgeServer("pass") as server:
        done = cli("watch", "--once", "--settle", "0", "--db", str(db), "--judge-model", "judge-1",
                   "--judge-base-url", server.url, "--tools", str(tools))  # fmt: skip
    assert done.returncode == 0, done.stderr
    expected = json.loads((FIXTURES / "openinference" / "parallel" / "expected.json").read_text())
    # Both producers recorded the same conversation: one trajectory, so one call judges both traces.
    assert len(server.trajectories) == 1
    shared = rows(
        db, "SELECT outcome, count(DISTINCT judge_trace_id), count(*) FROM trace_judgments GROUP BY 1"
    )
    assert shared == [("judged", 1, 2)]
    assert rows(db, "SELECT status, count(*) FROM rung_results WHERE rung_name = 'judge' GROUP BY 1") == [
        ("pass", 2)
    ]
    for t in server.trajectories:
        assert (t["instruction"], t["final_answer"]) == (expected["user_text"], expected["final_text"])
        assert [c["tool"] for c in t["calls"]] == [c["name"] for c in expected["calls"]]
    assert "cost_usd=unknown" in done.stderr  # judge-1 has no price in the shipped table


def test_a_bad_rubric_or_price_table_is_one_line(tmp_path):
    rubric, prices = tmp_path / "rubric.toml", tmp_path / "prices.toml"
    rubric.write_text('version = "x"\n[[criteria]]\nid = "grounded"\n')
    prices.write_text('[models."m"]\ninput = -1\noutput = 2\n')
    db = tmp_path / "empty.duckdb"
    for flag, path, words in (("--judge-rubric", rubric, "needs string `id`, `code` and `question`"),
                              ("--judge-prices", prices, "non-negative numbers")):  # fmt: skip
        done = cli("evaluate", "--db", str(db), "--judge-model", "sim:judge", flag, str(path))
        assert done.returncode == 2 and words in done.stderr and "Traceback" not in done.stderr
