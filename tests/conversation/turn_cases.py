"""A declarative domain holding multi-turn cases, for the tests that play them: the flights
example plus one three-turn conversation — search, book what it found (only `book_flight`
offered), then two searches in parallel."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import ROOT

CASE_ID = "fl-d3-006"
SEARCH = {"tool": "search_flights", "params": {"origin": "SFO", "destination": "JFK", "date": "2026-11-02"}}
BOOK = {"tool": "book_flight", "params": {"flight_id": "UA-512"}}
LAX = {"tool": "search_flights", "params": {"origin": "LAX", "destination": "ORD", "date": "2026-11-05"}}
BOS = {"tool": "search_flights", "params": {"origin": "BOS", "destination": "SEA", "date": "2026-12-01"}}
CATEGORY = """
[suite.categories.search_book_search_again]
dimension = "D3"
first_id = 6
tools = ["search_flights", "book_flight", "search_flights", "search_flights"]
order_sensitive = false
negative = false
"""
TURN_CALLS = [[SEARCH], [BOOK], [LAX, BOS]]


def three_turns(**changes: object) -> dict:
    record = {
        "schema": "MultiTurnCaseV1",
        "id": CASE_ID,
        "dimension": "D3",
        "category": "search_book_search_again",
        "context": {"db_fixture": "recorded", "notes": "search, book, then two more searches"},
        "turns": [
            {"user": "I need to fly SFO to JFK on 2026-11-02: what is there?",
             "golden": {"calls": [SEARCH], "order_sensitive": False}},
            {"user": "Book the first one, please.", "golden": {"calls": [BOOK], "order_sensitive": False},
             "tools": ["book_flight"]},
            {"user": "Also, what goes LAX to ORD on 2026-11-05 and BOS to SEA on 2026-12-01?",
             "golden": {"calls": [LAX, BOS], "order_sensitive": False}},
        ],
        "negative": False,
        "skip": False,
        "skip_reason": None,
    }  # fmt: skip
    record.update(changes)
    return record


def domain_with_turns(tmp_path: Path, record: dict | None = None) -> Path:
    """A copy of the flights domain with `record` (default: `three_turns()`) appended."""
    domain = tmp_path / "flights"
    shutil.copytree(ROOT / "examples" / "flights", domain)
    with (domain / "domain.toml").open("a") as f:
        f.write(CATEGORY)
    with (domain / "cases.jsonl").open("a") as f:
        f.write(json.dumps(record or three_turns()) + "\n")
    return domain
