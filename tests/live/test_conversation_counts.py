"""`watch` and `trend` count conversations as well as traces (issue 33 point 3): two four-turn
conversations of live traffic, ingested for real into a DuckDB file — one whose cancellation is
confirmed (PASS), one whose cancellation is never confirmed (FAIL under the policy's
`[[conversation.confirm]]`, while each of its turns passes)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import cli, cli_in_process
from conversation.otlp_turns import SCRIPT, Conversation, write

POLICY = """
[defaults]
max_tool_calls = 2

[[conversation.confirm]]
tool = "request_*"
by = "confirm_action"
"""
# the third turn looks an order up again instead of confirming the cancellation
UNCONFIRMED = [*SCRIPT[:2], ("Thanks, and W9?", [("c3", "get_order", {"order_id": "W9"})]), SCRIPT[3]]


def _store(tmp_path: Path) -> tuple[Path, Path]:
    confirmed, unconfirmed = Conversation("a7"), Conversation("b8", start_ns=1_800_000_100_000_000_000)
    turns = [confirmed.turn(i, user, calls) for i, (user, calls) in enumerate(SCRIPT)]
    turns += [unconfirmed.turn(i, user, calls) for i, (user, calls) in enumerate(UNCONFIRMED)]
    db, policy = tmp_path / "live.duckdb", tmp_path / "policy.toml"
    policy.write_text(POLICY, encoding="utf-8")
    assert (
        cli_in_process("ingest", "--db", str(db), write(tmp_path / "collector-c.jsonl", *turns)).returncode
        == 0
    )
    return db, policy


def test_watch_logs_the_conversations_it_judged(tmp_path: Path) -> None:
    db, policy = _store(tmp_path)
    done = cli("watch", "--db", str(db), "--policy", str(policy), "--once", "--settle", "0")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "watched batches=1 judged=8 PASS=8 conversations=2"
    assert "judged 8 traces PASS=8 conversations=2" in done.stderr


def test_trend_shows_the_conversation_pass_rate_per_bucket(tmp_path: Path) -> None:
    db, policy = _store(tmp_path)
    assert cli_in_process("evaluate", "--db", str(db), "--policy", str(policy)).returncode == 0
    data = cli("trend", "--db", str(db), "--by", "day", "--format", "json")
    assert data.returncode == 0, data.stderr
    (bucket,) = json.loads(data.stdout)["buckets"]
    # eight traces, all passing; two conversations, one of which failed
    assert (bucket["traces"], bucket["pass_rate"]) == (8, 1.0)
    assert bucket["conversations"] == {
        "conversations": 2,
        "verdict_counts": {"PASS": 1, "FAIL": 1},
        "scored": 2,
        "pass_rate": 0.5,
    }
    text = cli("trend", "--db", str(db), "--by", "day", env={"COLUMNS": "250"})
    assert text.returncode == 0, text.stderr
    assert "conversations" in text.stdout and "2 · 50.0%" in text.stdout


def test_trend_of_a_store_without_conversations_has_no_conversation_column(tmp_path: Path) -> None:
    convo = Conversation("c9")
    db = tmp_path / "one.duckdb"
    one = write(tmp_path / "collector-one.jsonl", convo.turn(0, *SCRIPT[0]))
    assert cli_in_process("ingest", "--db", str(db), one).returncode == 0
    assert cli_in_process("evaluate", "--db", str(db)).returncode == 0
    data = cli("trend", "--db", str(db), "--by", "day", "--format", "json")
    (bucket,) = json.loads(data.stdout)["buckets"]
    assert bucket["conversations"]["conversations"] == 0
    text = cli("trend", "--db", str(db), "--by", "day", env={"COLUMNS": "250"})
    assert "conversations" not in text.stdout
