"""MultiTurnCaseV1: a case as a conversation — the user's messages in order, each with its own
golden calls — versioned by `"schema"` and validated as strictly as CaseV1, through the real CLI
on a declarative domain (the flights example plus one multi-turn case). Bad input is one line
naming the turn; CaseV1 files are read exactly as before."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import ROOT, cli

from traceladder.suite.cases.model import Case

SEARCH = {"tool": "search_flights", "params": {"origin": "SFO", "destination": "JFK", "date": "2026-11-02"}}
BOOK = {"tool": "book_flight", "params": {"flight_id": "UA-512"}}
CATEGORY = """
[suite.categories.search_then_book_in_two_turns]
dimension = "D3"
first_id = 6
tools = ["search_flights", "book_flight"]
order_sensitive = true
negative = false
"""


def conversation(**changes: object) -> dict:
    record = {
        "schema": "MultiTurnCaseV1",
        "id": "fl-d3-006",
        "dimension": "D3",
        "category": "search_then_book_in_two_turns",
        "context": {"db_fixture": "recorded", "notes": "search in one turn, book in the next"},
        "turns": [
            {"user": "I need to fly SFO to JFK on 2026-11-02: what is there?",
             "golden": {"calls": [SEARCH], "order_sensitive": False}},
            {"user": "Book the first one, please.", "golden": {"calls": [BOOK], "order_sensitive": False},
             "tools": ["book_flight"]},
        ],
        "negative": False,
        "skip": False,
        "skip_reason": None,
    }  # fmt: skip
    record.update(changes)
    return record


def domain_with(tmp_path: Path, record: dict) -> Path:
    domain = tmp_path / "flights"
    shutil.copytree(ROOT / "examples" / "flights", domain)
    with (domain / "domain.toml").open("a") as f:
        f.write(CATEGORY)
    with (domain / "cases.jsonl").open("a") as f:
        f.write(json.dumps(record) + "\n")
    return domain


def test_a_multi_turn_case_validates_and_reads_as_its_turns(tmp_path):
    domain = domain_with(tmp_path, conversation())
    done = cli("cases", "validate", "--domain", str(domain))
    assert done.returncode == 0, done.stdout + done.stderr
    line = (domain / "cases.jsonl").read_text().splitlines()[-1]
    case = Case.from_record(json.loads(line))
    assert case.multi_turn and [t.user for t in case.turns] == [
        "I need to fly SFO to JFK on 2026-11-02: what is there?",
        "Book the first one, please.",
    ]
    assert [[c.tool for c in t.calls] for t in case.turns] == [["search_flights"], ["book_flight"]]
    assert case.turns[0].tools is None and case.turns[1].tools == ("book_flight",)
    assert case.instruction == case.turns[0].user and [c.tool for c in case.calls] == [
        "search_flights",
        "book_flight",
    ]


def _turns(*turns: object) -> dict:
    return conversation(turns=list(turns))


@pytest.mark.parametrize(
    ("record", "says"),
    [
        (_turns(), "turns: must be a non-empty list of turns (one per user message)"),
        (conversation(turns="hello"), "turns: must be a non-empty list of turns"),
        (_turns({"user": "Search SFO to JFK", "golden": {"calls": [SEARCH], "order_sensitive": False},
                 "tools": ["book_flight"]}),
         "turns[0].golden.calls[0].tool: 'search_flights' is not offered in turn 1 (its tools: book_flight)"),
        (_turns({"user": "Search", "golden": {"calls": [{"tool": "cancel_flight", "params": {}}],
                                              "order_sensitive": False}}),
         "turns[0].golden.calls[0].tool: 'cancel_flight' is not a tool of the dir:"),
        (_turns({"user": "  ", "golden": {"calls": [SEARCH], "order_sensitive": False}}),
         "turns[0].user: must be a non-empty string"),
        (_turns({"user": "Search", "golden": {"calls": [SEARCH], "order_sensitive": False}, "say": 1}),
         "turns[0].say: unknown field (only user, golden, tools)"),
        (conversation(instruction="x"), "instruction: unknown field (MultiTurnCaseV1 has exactly 9 fields)"),
        (conversation(schema="CaseV2"), "schema: 'CaseV2' is not a case format"),
    ],
    ids=["empty", "not-a-list", "tool-not-offered", "unknown-tool", "blank-message", "unknown-turn-field",
         "instruction-too", "unknown-schema"],
)  # fmt: skip
def test_a_bad_multi_turn_case_is_one_line_naming_the_turn(tmp_path, record, says):
    domain = domain_with(tmp_path, record)
    done = cli("run", "--domain", str(domain), "--model", "sim:oracle", "--db", str(tmp_path / "x.duckdb"))
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert "fl-d3-006" in lines[0] and says in lines[0], lines[0]
