"""An agent under test that answers like the plain openai example except on turn 2, where it
books a flight it was not asked for (and the conversation's later turns pass)."""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples" / "agents"))

from plain_openai import run as plain  # noqa: E402


def run(case):
    if case.turn == 1:
        return case.call_tool("book_flight", json.dumps({"flight_id": "DL-999"}))
    return plain(case)
