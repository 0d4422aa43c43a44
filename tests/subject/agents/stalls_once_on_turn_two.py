"""An agent under test that, the first time it reaches turn 2, says so (the file STALL_MARKER
names) and waits to be stopped; every other call answers like the plain openai example."""

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples" / "agents"))

from plain_openai import run as plain  # noqa: E402


def run(case):
    marker = Path(os.environ["STALL_MARKER"])
    if case.turn == 1 and not marker.exists():
        marker.write_text(case.conversation_id)
        time.sleep(600)  # the test stops the run meanwhile
    return plain(case)
