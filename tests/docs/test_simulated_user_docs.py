"""docs/conversations.md's "A simulated user" section as written: its goal case validates and its
command plays it (sim:user against sim:oracle, PASS), and the GOAL_NOT_MET reason it shows is the
one a model that never calls a tool gets, word for word."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from conftest import ROOT, cli, out_value, rows
from conversation.goal_cases import domain_with_goal
from scripted_server import ModelServer, chat_reply

SECTION = (
    (ROOT / "docs" / "conversations.md")
    .read_text(encoding="utf-8")
    .split("## A simulated user", 1)[1]
    .split("\n## ", 1)[0]
)


def test_the_goal_case_and_command_shown_run_as_written(tmp_path: Path) -> None:
    (record,) = re.findall(r"```json\n(.*?)```", SECTION, re.S)
    domain = domain_with_goal(tmp_path, json.loads(record))
    assert domain.name == "flights"
    assert cli("cases", "validate", "--domain", str(domain)).returncode == 0
    (command,) = re.findall(r"```bash\n(.*?)```", SECTION, re.S)
    words = shlex.split(command)
    assert words[0] == "traceladder"
    done = cli(*words[1:], "--db", str(tmp_path / "doc.duckdb"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert out_value(done, "status").startswith("complete ")
    assert rows(tmp_path / "doc.duckdb", "SELECT verdict FROM conversation_results") == [("PASS",)]
    # the reason shown is what a model that never calls a tool gets
    (shown,) = re.findall(r"```\n(GOAL_NOT_MET.*?)```", SECTION, re.S)
    db = tmp_path / "never.duckdb"
    never = ModelServer(domain, override=lambda body: chat_reply({"role": "assistant", "content": "No."}))
    with never as server:
        failed = cli(
            "run", "--domain", str(domain), "--model", "m", "--base-url", server.url, "--user-model", "sim:user",
            "--case", "fl-d3-007", "--db", str(db),
        )  # fmt: skip
    assert failed.returncode == 0, failed.stderr[-2000:]
    assert rows(db, "SELECT reason FROM conversation_results") == [(" ".join(shown.split()),)]
