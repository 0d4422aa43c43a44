"""docs/conversations.md's SQL runs as written, through the real `sql` command, over a four-turn
conversation ingested for real — and says what the page says it does."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conversation.otlp_turns import SCRIPT, Conversation, write

from tests.conftest import ROOT, cli_in_process

DOC = (ROOT / "docs" / "conversations.md").read_text(encoding="utf-8")


def test_every_sql_example_runs_on_a_four_turn_conversation(tmp_path: Path) -> None:
    convo = Conversation("d0c5")
    turns = [convo.turn(i, user, calls) for i, (user, calls) in enumerate(SCRIPT)]
    db = tmp_path / "s.duckdb"
    assert (
        cli_in_process("ingest", "--db", str(db), write(tmp_path / "collector-t.jsonl", *turns)).returncode
        == 0
    )
    policy = tmp_path / "policy.toml"
    policy.write_text(re.findall(r"```toml\n(.*?)```", DOC, re.S)[0], encoding="utf-8")
    assert cli_in_process("evaluate", "--db", str(db), "--policy", str(policy)).returncode == 0
    # the multi-turn cases' example runs over a played case (tests/conversation/test_multi_turn_run.py)
    blocks = [b for b in re.findall(r"```sql\n(.*?)```", DOC, re.S) if "case_turns" not in b]
    assert len(blocks) == 5
    results = []
    for sql in blocks:
        r = cli_in_process("sql", "--db", str(db), sql, "--json")
        assert r.returncode == 0, r.stderr
        results.append(json.loads(r.stdout))
    per_turn, longest, repeated, tied, judged = results
    assert [(row["turns"], row["tied_by"], row["verdict"]) for row in tied] == [(4, "history", "PASS")]
    assert [(row["turn"], row["calls"], row["linked_by"]) for row in per_turn] == [
        (0, 1, "none"), (1, 1, "history"), (2, 1, "history"), (3, 2, "history")
    ]  # fmt: skip
    assert [row["turns"] for row in longest] == [4]
    assert [(row["in_turn"], row["made_in_turn"]) for row in repeated] == [
        (1, 0), (2, 0), (2, 1), (3, 0), (3, 1), (3, 2)
    ]  # fmt: skip
    assert [(row["verdict"], row["deciding_turn"], row["finding_class"]) for row in judged] == [
        ("PASS", None, None)
    ]


def test_the_tied_by_example_reads_a_real_producers_conversation(tmp_path: Path) -> None:
    """The example that says how turns were tied, over the captured pydantic-ai conversation whose
    cancellation is never confirmed (tests/fixtures/conversations), says what the page says."""
    fixture = ROOT / "tests" / "fixtures" / "conversations" / "pydantic-ai" / "unconfirmed-plain"
    db = tmp_path / "s.duckdb"
    assert cli_in_process("ingest", "--db", str(db), str(fixture / "collector-traces.jsonl")).returncode == 0
    policy = tmp_path / "policy.toml"
    policy.write_text(re.findall(r"```toml\n(.*?)```", DOC, re.S)[0], encoding="utf-8")
    assert cli_in_process("evaluate", "--db", str(db), "--policy", str(policy)).returncode == 0
    sql = re.findall(r"```sql\n(.*?)```", DOC, re.S)[3]
    r = cli_in_process("sql", "--db", str(db), sql, "--json")
    assert r.returncode == 0, r.stderr
    rows = [
        (row["turns"], row["tied_by"], row["verdict"], row["deciding_turn"]) for row in json.loads(r.stdout)
    ]
    assert rows == [(4, "gen_ai.conversation.id", "FAIL", 1)]
