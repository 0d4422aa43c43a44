"""An agent under test that answers turn 1 like the plain openai example and raises on turn 2."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples" / "agents"))

from plain_openai import run as plain  # noqa: E402


def run(case):
    if case.turn == 1:
        raise RuntimeError("the session store is down")
    return plain(case)
