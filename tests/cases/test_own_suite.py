"""Your agent, your suite — the round trip end to end, through the real CLI: a real third-party
instrumentation (the OpenInference agent of `live_agent.py`) sends its traces to `traceladder
serve`; `cases from-traces` records them as a declarative domain plus suite; `run` replays the
suite offline against models (sim:oracle, and a scripted model behind the real `openai` client
whose behaviour a system-prompt change decides); the baseline locks and the gate judges it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import cli, rows
from receiver import ServeProcess
from scripted_live_model import LiveModel
from scripted_server import ModelServer

AGENT = Path(__file__).resolve().parents[1] / "live_agent.py"
CONVERSATIONS = 4  # 0 and 3: get_order → cancel_order → confirm_action; 1 and 2: get_order only


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> tuple[Path, Path]:
    """(the live store, the recorded suite directory)."""
    tmp = tmp_path_factory.mktemp("own")
    db = tmp / "live.duckdb"
    with ServeProcess(db) as serve, LiveModel() as model:
        agent = subprocess.run(
            [sys.executable, str(AGENT), "--endpoint", f"http://127.0.0.1:{serve.port}", "--model-url", model.url,
             "--version", "1.0", "--service", "retail-agent", "--conversations", str(CONVERSATIONS), "--seed", "1"],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert agent.returncode == 0, agent.stderr
        code, err = serve.stop()
        assert code == 0, err
    suite = tmp / "suite"
    done = cli("cases", "from-traces", "--db", str(db), "--service", "retail-agent", "--out", str(suite))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "recorded 4 cases (D2 2, D3 2), 3 tools, 8 recorded results"
    return db, suite


def cases_of(suite: Path) -> dict[str, dict]:
    return {c["id"]: c for c in map(json.loads, (suite / "cases.jsonl").read_text().splitlines())}


def run(suite: Path, db: Path, *args: str) -> str:
    done = cli("run", "--domain", str(suite), "--cases", str(suite / "cases.jsonl"), "--db", str(db), *args)
    assert done.returncode == 0, done.stderr
    return re.search(r"^run_id=(\S+)$", done.stdout, re.M).group(1)  # type: ignore[union-attr]


def test_the_recorded_suite_says_what_the_traces_did(recorded):
    db, suite = recorded
    cases = cases_of(suite)
    traces = {t for (t,) in rows(db, "SELECT trace_id FROM traces")}
    assert {c["context"]["source_trace"] for c in cases.values()} == traces
    chain = cases["tr-d3-001"]
    assert chain["golden"] == {
        "calls": [
            {"tool": "get_order", "params": {"order_id": "W123"}},
            {"tool": "cancel_order", "params": {"order_id": "W123", "reason": "no_longer_needed"}},
            {"tool": "confirm_action", "params": {"action_id": "act-W123-cancel"}},
        ],
        "order_sensitive": True,
    }  # fmt: skip  (confirm_action sends the id cancel_order returned)
    assert cases["tr-d2-001"]["golden"] == {"calls": [{"tool": "get_order", "params": {"order_id": "W123"}}],
                                            "order_sensitive": False}  # fmt: skip
    assert all(re.fullmatch(r".+ \(conversation #\d\)", c["instruction"]) for c in cases.values())
    tools = json.loads((suite / "tools.json").read_text())
    assert [t["function"]["name"] for t in tools] == ["cancel_order", "confirm_action", "get_order"]
    assert tools[2]["function"]["description"] == "Look an order up by its id."
    assert cli("domain", "validate", "--domain", str(suite)).returncode == 0
    assert cli("cases", "validate", "--domain", str(suite)).returncode == 0


def test_the_golden_model_passes_every_case_offline(recorded, tmp_path):
    _, suite = recorded
    db = tmp_path / "oracle.duckdb"
    run_id = run(suite, db, "--model", "sim:oracle")
    verdicts = rows(db, f"SELECT case_id, verdict FROM case_results WHERE run_id = '{run_id}' ORDER BY 1")
    assert verdicts == [(c, "PASS") for c in sorted(cases_of(suite))]
    assert rows(db, "SELECT count(*) FROM tool_calls WHERE status <> 'ok'") == [(0,)]


def test_a_changed_argument_fails_at_rung_2_with_its_diff_and_a_new_call_is_a_tool_error(recorded, tmp_path):
    _, suite = recorded
    changed, extra = tmp_path / "changed.txt", tmp_path / "extra.txt"
    changed.write_text('Support agent. [[change-argument cancel_order reason "ordered_by_mistake"]]\n')
    extra.write_text(
        'Support agent. [[extra-call cancel_order {"order_id": "W123", "reason": "ordered_by_mistake"}]]\n'
    )
    db = tmp_path / "scripted.duckdb"
    with ModelServer(suite) as model:
        first = run(
            suite, db, "--model", "m", "--base-url", model.url, "--system-prompt", str(changed), "--no-judge"
        )
        second = run(
            suite, db, "--model", "m", "--base-url", model.url, "--system-prompt", str(extra), "--no-judge"
        )
    results = rows(
        db,
        f"SELECT case_id, verdict, settled_at, failure_class FROM case_results WHERE run_id = '{first}' ORDER BY 1",
    )
    assert results == [("tr-d2-001", "PASS", 4, None), ("tr-d2-002", "PASS", 4, None),
                       ("tr-d3-001", "FAIL", 2, "PARAM_WRONG_VALUE"), ("tr-d3-002", "FAIL", 2, "PARAM_WRONG_VALUE")]  # fmt: skip
    diffs = rows(
        db,
        f"SELECT DISTINCT rung, code, tool, param, expected, actual FROM findings WHERE run_id = '{first}'",
    )
    assert diffs == [
        (2, "PARAM_WRONG_VALUE", "cancel_order", "reason", '"no_longer_needed"', '"ordered_by_mistake"')
    ]

    # A call nobody recorded: a tool error the model sees, marked on its span, and a failing case.
    spans = rows(db, f"""
        SELECT s.status_code, s.error_type, s.attributes->>'$."traceladder.tool.error"' FROM spans s
        JOIN case_runs c USING (trace_id) WHERE c.run_id = '{second}' AND s.error_type IS NOT NULL""")  # fmt: skip
    assert len(spans) == 4 and {(s[0], s[1]) for s in spans} == {("ERROR", "no_recorded_result")}
    assert json.loads(spans[0][2])["error"]["message"] == (
        'no recorded result for cancel_order {"order_id":"W123","reason":"ordered_by_mistake"}'
    )
    results = rows(
        db, f"SELECT case_id, verdict, failure_class FROM case_results WHERE run_id = '{second}' ORDER BY 1"
    )
    assert {r[1:] for r in results} == {("FAIL", "CALL_EXTRA")}, results
    told = rows(db, f"SELECT DISTINCT code, tool FROM findings WHERE run_id = '{second}'")
    assert told == [("CALL_EXTRA", "cancel_order")]


def test_the_suite_baseline_locks_and_the_gate_passes_and_fails_on_it(recorded, tmp_path):
    _, suite = recorded
    db = tmp_path / "ci.duckdb"
    broken = tmp_path / "broken-prompt.txt"
    broken.write_text('Support agent. [[change-argument get_order order_id "W124"]]\n')
    with ModelServer(suite) as server:
        model = ("--model", "m", "--base-url", server.url, "--no-judge")
        runs = [run(suite, db, *model) for _ in range(3)]
        e = tmp_path / "eval"
        for args in (
            ["consistency", *runs, "--output", str(e / "consistency.json")],
            ["baseline", "review-template", runs[0], "--output", str(e / "review.json")],
            ["baseline", "lock", "--canonical", runs[0], "--consistency", str(e / "consistency.json"),
             "--review", str(e / "review.json"), "--output", str(e / "baseline.json")],
        ):  # fmt: skip
            done = cli(*args, "--db", str(db))
            assert done.returncode == 0, (args, done.stderr)
        passed = cli("gate", "--db", str(db), "--baseline", str(e / "baseline.json"), "--max-drop", "0.05")
        assert passed.returncode == 0, passed.stdout + passed.stderr
        run(suite, db, *model, "--system-prompt", str(broken))  # the pull request: a prompt change
    failed = cli("gate", "--db", str(db), "--baseline", str(e / "baseline.json"), "--max-drop", "0.05")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "tr-d2-001" in failed.stdout + failed.stderr
    hallucinated = rows(db, "SELECT DISTINCT code, param FROM findings WHERE rung = 2")
    assert hallucinated == [("PARAM_HALLUCINATED_ID", "order_id")]  # W124 is no id the recording knows


def test_recorded_cases_are_labelled_by_the_requests_first_words(recorded):
    """A category (what reports and domain.toml call a case by) is the request's first words, not
    the source trace's hash; unique across the suite."""
    _, suite = recorded
    cases = list(cases_of(suite).values())
    labels = [c["category"] for c in cases]
    assert len(set(labels)) == len(labels)
    for case in cases:
        words = "_".join(re.findall(r"\w+", case["instruction"].casefold()))
        label = case["category"]
        assert case["context"]["source_trace"] not in label
        # the first words, or the first words numbered (_2, _3) after an earlier case took them
        assert words.startswith(label) or words.startswith(re.sub(r"_\d+$", "", label)), (label, words)
        assert label.count("_") >= 3
    toml = (suite / "domain.toml").read_text()
    assert all(f"[suite.categories.{json.dumps(label)}]" in toml for label in labels)


def test_a_case_label_is_the_first_words_then_numbered_or_the_trace_for_no_words():
    from traceladder.workflows.domain_writer import case_label

    taken: set[str] = set()
    assert case_label("Book a table for 4 at Chez Nous, please!", "ab" * 16, taken) == "book_a_table_for_4_at"
    assert case_label("Book a table for 4 at the Ritz", "cd" * 16, taken) == "book_a_table_for_4_at_2"
    assert case_label("¿Qué tiempo hace en París?", "ef" * 16, taken) == "qué_tiempo_hace_en_parís"
    assert case_label("!!! ???", "0123456789abcdef" * 2, taken) == "trace_01234567"
    assert case_label("x" * 100, "ab" * 16, taken) == "x" * 48
