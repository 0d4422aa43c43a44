"""A conversation recorded from traces replays as one multi-turn case, end to end: a real
multi-turn run (the built-in loop against the simulated model through the real `openai` client)
→ the store → `cases from-traces` → `run` on the recorded suite with `sim:oracle`, its tools
answering from the recorded results → every turn and the conversation PASS."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import cli, out_value, rows

from conversation.turn_cases import CASE_ID, TURN_CALLS, domain_with_turns, three_turns


def test_a_recorded_conversation_replays_as_one_multi_turn_case_that_passes(tmp_path: Path) -> None:
    domain = domain_with_turns(tmp_path)
    source = tmp_path / "source.duckdb"
    done = cli(
        "run", "--domain", str(domain), "--model", "sim:oracle", "--case", CASE_ID, "--db", str(source)
    )
    assert done.returncode == 0, done.stderr[-2000:]
    recorded = tmp_path / "recorded"
    made = cli("cases", "from-traces", "--db", str(source), "--out", str(recorded))
    assert made.returncode == 0, made.stderr[-2000:]
    # one case for the conversation: the turns' own messages in order, each turn's calls its golden
    (record,) = [json.loads(line) for line in (recorded / "cases.jsonl").read_text().splitlines()]
    assert record["schema"] == "MultiTurnCaseV1"
    assert [t["user"] for t in record["turns"]] == [t["user"] for t in three_turns()["turns"]]
    assert [t["golden"]["calls"] for t in record["turns"]] == TURN_CALLS
    prompt = (domain / "system_prompt.txt").read_text(encoding="utf-8")
    assert (recorded / "system_prompt.txt").read_text(encoding="utf-8") == prompt
    assert cli("cases", "validate", "--domain", str(recorded)).returncode == 0

    replay = tmp_path / "replay.duckdb"
    again = cli("run", "--domain", str(recorded), "--model", "sim:oracle", "--db", str(replay))
    assert again.returncode == 0, again.stderr[-2000:]
    run_id = out_value(again, "run_id")
    turns = rows(
        replay,
        "SELECT ct.turn, r.verdict, count(t.ordinal), count(t.ordinal) FILTER (WHERE t.status = 'ok') "
        "FROM case_turns ct JOIN trace_results r USING (trace_id) LEFT JOIN tool_calls t USING (trace_id) "
        "WHERE ct.run_id = ? GROUP BY ALL ORDER BY ct.turn",
        [run_id],
    )
    # every turn passes, each of its calls answered from the recording (none refused as unrecorded)
    assert turns == [(0, "PASS", 1, 1), (1, "PASS", 1, 1), (2, "PASS", 2, 2)]
    assert rows(replay, "SELECT verdict, turns FROM conversation_results") == [("PASS", 3)]
    sent = rows(
        replay,
        "SELECT DISTINCT json_extract_string(attributes->>'$.\"gen_ai.input.messages\"', "
        "'$[0].parts[0].content') "
        "FROM spans WHERE name LIKE 'chat %' AND source IS DISTINCT FROM 'judge'",
    )
    assert sent == [(prompt,)]  # the replay sends the recorded system prompt


def test_a_second_recording_of_the_same_conversation_is_one_line_or_skipped(tmp_path: Path) -> None:
    domain = domain_with_turns(tmp_path)
    source = tmp_path / "twice.duckdb"
    done = cli(
        "run", "--domain", str(domain), "--model", "sim:oracle", "--case", CASE_ID, "--repeat", "2",
        "--db", str(source), "--no-report",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    refused = cli("cases", "from-traces", "--db", str(source), "--out", str(tmp_path / "no"))
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    (line,) = refused.stderr.strip().splitlines()
    assert "turn 1 of conversation" in line and "the same user request as trace" in line, line
    assert not (tmp_path / "no").exists()  # nothing written
    skipped = cli("cases", "from-traces", "--db", str(source), "--out", str(tmp_path / "one"), "--skip-bad")
    assert skipped.returncode == 0, skipped.stderr
    records = [json.loads(line) for line in (tmp_path / "one" / "cases.jsonl").read_text().splitlines()]
    assert [(r["schema"], len(r["turns"])) for r in records] == [("MultiTurnCaseV1", 3)]
