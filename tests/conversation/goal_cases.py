"""A declarative domain holding a goal case, for the simulated-user tests: the flights example
plus one case whose user wants a flight SFO → JFK on 2026-11-02 searched and the first one booked
— no scripted messages, a user goal and the calls the conversation must make."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import ROOT

GOAL_ID = "fl-d3-007"
SEARCH = {"tool": "search_flights", "params": {"origin": "SFO", "destination": "JFK", "date": "2026-11-02"}}
BOOK = {"tool": "book_flight", "params": {"flight_id": "UA-512"}}
INSTRUCTIONS = "I want to fly from SFO to JFK on 2026-11-02: find the flights and book the first one."
CATEGORY = """
[suite.categories.goal_search_and_book]
dimension = "D3"
first_id = 7
tools = ["search_flights", "book_flight"]
order_sensitive = true
negative = false
"""


def goal_case(**goal_changes: object) -> dict:
    goal = {
        "instructions": INSTRUCTIONS,
        "max_turns": 3,
        "golden": {"calls": [SEARCH, BOOK], "order_sensitive": True},
    }
    goal.update(goal_changes)
    return {
        "schema": "MultiTurnCaseV1",
        "id": GOAL_ID,
        "dimension": "D3",
        "category": "goal_search_and_book",
        "context": {"db_fixture": "recorded", "notes": "a user goal: search, then book"},
        "user_goal": goal,
        "negative": False,
        "skip": False,
        "skip_reason": None,
    }


def domain_with_goal(tmp_path: Path, record: dict | None = None) -> Path:
    """A copy of the flights domain with `record` (default: `goal_case()`) appended."""
    domain = tmp_path / "flights"
    shutil.copytree(ROOT / "examples" / "flights", domain)
    with (domain / "domain.toml").open("a") as f:
        f.write(CATEGORY)
    with (domain / "cases.jsonl").open("a") as f:
        f.write(json.dumps(record or goal_case()) + "\n")
    return domain
