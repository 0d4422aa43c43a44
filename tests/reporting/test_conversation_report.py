"""Reports show a conversation as its turns (issue 33 point 3), and a multi-turn case run counts
once (decision 460).

A real multi-turn run (the built-in loop against the simulated model through the real `openai`
client, into a real DuckDB file), judged once as it is (every turn and the conversation PASS) and
once under a policy it breaks in two ways: turn 3 makes two calls where `[defaults]` allows one (a
per-turn FAIL), and the booking in turn 2 is never confirmed (a conversation finding at a turn
that itself passed, which decides the conversation). Then: the JSON report validates against the
published schema and holds the conversation as its turns; the text, HTML and JUnit renderings
show the same; the summary, the gate and the report agree on one pass rate counting the case run
once; live traces judged by `evaluate` show their conversation on the live page."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

import pytest
from conftest import ROOT, cli, cli_in_process, out_value
from conversation.otlp_turns import SCRIPT, Conversation, write
from conversation.turn_cases import CASE_ID, TURN_CALLS, domain_with_turns, three_turns
from jsonschema import Draft202012Validator

SCHEMA = json.loads((ROOT / "traceladder" / "schemas" / "report-v1.schema.json").read_text(encoding="utf-8"))
POLICY = """
[defaults]
max_tool_calls = 1

[[conversation.confirm]]
tool = "book_flight"
by = "confirm_booking"
"""
SINGLE = "fl-d1-001"  # a one-turn case of the flights example, beside the multi-turn one


def _report(db: Path, run_id: str, fmt: str = "json") -> str:
    done = cli("report", run_id, "--db", str(db), "--format", fmt)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _valid(report: dict) -> dict:
    errors = [e.message for e in Draft202012Validator(SCHEMA).iter_errors(report)]
    assert not errors, errors[:3]
    return report


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One run (the multi-turn case and a one-turn case, twice each), in two stores: judged as it
    is, and judged under POLICY."""
    tmp = tmp_path_factory.mktemp("conversation-report")
    domain = domain_with_turns(tmp)
    db = tmp / "run.duckdb"
    done = cli("run", "--domain", str(domain), "--model", "sim:oracle", "--case", CASE_ID, "--case", SINGLE,
               "--repeat", "2", "--db", str(db), "--no-report")  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    run_id = out_value(done, "run_id")
    strict = tmp / "strict.duckdb"
    shutil.copy(db, strict)
    assert cli("evaluate", "--db", str(db)).returncode == 0
    policy = tmp / "policy.toml"
    policy.write_text(POLICY, encoding="utf-8")
    judged = cli("evaluate", "--db", str(strict), "--policy", str(policy))
    assert judged.returncode == 0, judged.stderr[-2000:]
    return {"db": db, "strict": strict, "run_id": run_id, "tmp": tmp}


def test_the_json_report_holds_each_conversation_as_its_turns(played: dict) -> None:
    report = _valid(json.loads(_report(played["db"], played["run_id"])))
    conversations = report["conversations"]
    assert [(c["case_id"], c["repeat_index"]) for c in conversations] == [(CASE_ID, 0), (CASE_ID, 1)]
    users = [t["user"] for t in three_turns()["turns"]]
    for c in conversations:
        assert (c["verdict"], c["deciding_turn"], c["findings"]) == ("PASS", None, [])
        assert c["linked_by"] == "gen_ai.conversation.id"
        assert [t["turn"] for t in c["turns"]] == [0, 1, 2]
        assert [t["user_message"] for t in c["turns"]] == users
        assert [t["verdict"] for t in c["turns"]] == ["PASS"] * 3
        # each turn's own calls, never an earlier turn's
        calls = [[{"tool": k["tool"], "params": k["arguments"]} for k in t["calls"]] for t in c["turns"]]
        assert calls == TURN_CALLS
        # each turn is the trace of its result
        by_trace = {r["trace_id"]: r for r in report["results"]}
        assert [by_trace[t["trace_id"]]["turn"] for t in c["turns"]] == [0, 1, 2]
    # two multi-turn case runs and two one-turn case runs: four case runs, eight results
    summary = report["summary"]
    assert len(report["results"]) == 8
    assert (summary["case_count"], summary["verdict_counts"]["PASS"], summary["accuracy"]) == (4, 4, 1.0)
    assert summary["conversations"] == {
        "conversation_count": 2,
        "verdict_counts": {"PASS": 2, "FAIL": 0, "SKIP": 0, "AGENT_ERROR": 0},
        "scored_count": 2,
        "accuracy": 1.0,
    }


def test_a_conversation_a_check_decides_fails_its_case_run_once(played: dict) -> None:
    report = _valid(json.loads(_report(played["strict"], played["run_id"])))
    first = report["conversations"][0]
    assert [t["verdict"] for t in first["turns"]] == ["PASS", "PASS", "FAIL"]
    assert (first["verdict"], first["deciding_turn"]) == ("FAIL", 1)
    assert first["reason"].startswith("UNCONFIRMED_ACTION at turn 2: book_flight")
    assert [(f["turn"], f["finding_class"]) for f in first["findings"]] == [(1, "UNCONFIRMED_ACTION")]
    summary = report["summary"]
    # each multi-turn case run once, with its conversation's verdict and the class that decided it
    assert (summary["case_count"], summary["verdict_counts"]["PASS"], summary["verdict_counts"]["FAIL"]) == (
        4,
        2,
        2,
    )
    assert summary["taxonomy_counts"] == {"UNCONFIRMED_ACTION": 2}
    assert summary["dimensions"]["D3"]["verdict_counts"]["FAIL"] == 2
    assert summary["accuracy"] == 0.5
    assert summary["conversations"]["verdict_counts"]["FAIL"] == 2
    # the results stay one per trace: turn 3 is the FAIL of its own rule
    turn_verdicts = [
        (r["turn"], r["verdict"], r["taxonomy"]) for r in report["results"] if r["case_id"] == CASE_ID
    ]
    assert turn_verdicts == [(0, "PASS", None), (1, "PASS", None), (2, "FAIL", "TOO_MANY_TOOL_CALLS")] * 2


def test_gate_and_report_read_one_pass_rate_with_multi_turn_cases(played: dict, tmp_path: Path) -> None:
    report = json.loads(_report(played["strict"], played["run_id"]))
    outputs, summary_md = tmp_path / "out.txt", tmp_path / "summary.md"
    env = {"GITHUB_OUTPUT": str(outputs), "GITHUB_STEP_SUMMARY": str(summary_md)}
    gate = cli(
        "gate", "--db", str(played["strict"]), "--run", played["run_id"], "--min-pass-rate", "0", env=env
    )
    assert gate.returncode == 0, gate.stderr
    rate = dict(line.split("=", 1) for line in outputs.read_text().splitlines())["pass_rate"]
    counts = {v: int(n) for v, n in re.findall(r"^\| ([A-Z_]+) \| (\d+) \|$", summary_md.read_text(), re.M)}
    assert rate == f"{report['summary']['accuracy']:.4f}" == "0.5000"
    assert counts == report["summary"]["verdict_counts"]


def test_text_html_and_junit_show_the_turns(played: dict) -> None:
    text = _report(played["strict"], played["run_id"], "text")
    assert "Conversations: 2 (FAIL 2) · pass rate 0.0%" in text
    block = text[text.index("Conversations: 2") :]
    assert f"{CASE_ID}  FAIL  (3 turns, decided by turn 2): UNCONFIRMED_ACTION at turn 2" in block
    for turn in three_turns()["turns"]:
        assert turn["user"][:40] in block
    assert "turn 3  FAIL" in block and "book_flight(" in block
    page = _page(played["strict"], played["run_id"])
    section = page[page.index('<section id="conversations">') :]
    section = section[: section.index("</section>")]
    assert section.count('<h3 class="conversation">') == 2
    assert html.escape(three_turns()["turns"][1]["user"]) in section and "decided by turn 2" in section
    junit = _report(played["strict"], played["run_id"], "junit")
    assert 'tests="8" failures="2"' in junit and junit.count("<testcase ") == 8
    assert junit.count(f'name="{CASE_ID} turn 3"') == 1


def _page(db: Path, run_id: str, *extra: str) -> str:
    out = db.parent / f"{db.stem}-{len(extra)}.html"
    done = cli(
        "report",
        *([run_id] if run_id else []),
        "--db",
        str(db),
        "--format",
        "html",
        "--out",
        str(out),
        *extra,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return out.read_text(encoding="utf-8")


def test_a_report_pages_through_its_conversations(played: dict) -> None:
    """Read a page of conversations at a time: one at a time, every conversation once, in order."""
    from traceladder.store.db import open_store
    from traceladder.workflows.report_files import open_report

    with open_store(played["strict"], read_only=True) as store:
        opened = open_report(store, played["run_id"])
        pages = list(opened.conversation_batches(batch=1))
        failing = list(opened.conversation_batches(batch=1, failing=True))
    assert [len(p) for p in pages] == [1, 1]
    assert [p[0]["repeat_index"] for p in pages] == [0, 1]
    assert [p[0]["conversation_id"] for p in failing] == [p[0]["conversation_id"] for p in pages]


def test_a_run_without_conversations_has_no_conversations_section(tmp_path: Path) -> None:
    db = tmp_path / "single.duckdb"
    done = cli("run", "--model", "sim:oracle", "--case", "fc-d1-002", "--db", str(db), "--no-report")
    assert done.returncode == 0, done.stderr
    assert cli("evaluate", "--db", str(db)).returncode == 0
    report = _valid(json.loads(_report(db, out_value(done, "run_id"))))
    assert "conversations" not in report and "conversations" not in report["summary"]
    assert report["summary"]["case_count"] == len(report["results"]) == 1


def test_live_conversations_show_as_turns_with_what_producers_sent_made_harmless(tmp_path: Path) -> None:
    """Traces of live traffic judged by `evaluate`: the live page shows the conversation as its
    turns; markup and terminal escapes a user sent are shown as text, never acted on."""
    script = list(SCRIPT)
    script[1] = ("<script>alert(1)</script>\x1b[31m cancel it", script[1][1])
    convo = Conversation("e5c4")
    turns = [convo.turn(i, user, calls) for i, (user, calls) in enumerate(script)]
    db = tmp_path / "live.duckdb"
    assert (
        cli_in_process("ingest", "--db", str(db), write(tmp_path / "collector-live.jsonl", *turns)).returncode
        == 0
    )
    assert cli_in_process("evaluate", "--db", str(db)).returncode == 0  # set-up: the page is the subject
    page = _page(db, "", "--live")
    section = page[page.index('<section id="conversations">') :]
    section = section[: section.index("</section>")]
    assert section.count('<h3 class="conversation">') == 1 and "4 turns" in section
    assert "<script>alert" not in section and "&lt;script&gt;alert(1)&lt;/script&gt;" in section
    assert "\x1b" not in page
    for user, _ in script[2:]:
        assert html.escape(user) in section
