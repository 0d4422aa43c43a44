"""docs/conversations.md's report examples are real output: the commands of its Reports section
run as written (the domain named there is the flights example with the three-turn case of
tests/conversation/turn_cases.py, the policy the section's own), and the text and JSON the page
shows are what `report` prints, but for the run's and traces' ids."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from conversation.turn_cases import domain_with_turns

from tests.conftest import ROOT, cli

DOC = (ROOT / "docs" / "conversations.md").read_text(encoding="utf-8")
SECTION = DOC[DOC.index("\n## Reports\n") :]


def _same(doc_line: str, real_line: str) -> bool:
    """A line of the page matches a printed one where `…` stands for any text (an id)."""
    pattern = ".*".join(re.escape(part) for part in doc_line.split("…"))
    return re.fullmatch(pattern, real_line.rstrip()) is not None


def _without_ids(entry: dict) -> dict:
    return {**entry, "conversation_id": None, "turns": [{**t, "trace_id": None} for t in entry["turns"]]}


def test_the_report_examples_are_what_report_prints(tmp_path: Path) -> None:
    domain = domain_with_turns(tmp_path)
    (tmp_path / "strict.toml").write_text(
        re.findall(r"```toml\n(.*?)```", SECTION, re.S)[0], encoding="utf-8"
    )
    console = re.findall(r"```console\n(.*?)```", SECTION, re.S)[0].splitlines()
    commands = [line[2:] for line in console if line.startswith("$ ")]
    assert [shlex.split(c)[:2] for c in commands] == [["traceladder", "run"], ["traceladder", "evaluate"],
                                                      ["traceladder", "report"]]  # fmt: skip
    # a terminal of 120 columns, as the page shows it (the headline wraps there)
    env = {"TRACELADDER_DB": str(tmp_path / "store.duckdb"), "COLUMNS": "120"}
    printed = ""
    for command in commands:
        args = [str(domain) if a == "flights-turns" else a for a in shlex.split(command)[1:]]
        done = cli(*args, env=env, cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-2000:]
        printed = done.stdout
    shown = [line for line in console if not line.startswith("$ ")]
    real = printed.splitlines()
    # the headline, then (after the summary tables, elided on the page) the conversations verbatim
    assert _same(shown[0], real[0]), (shown[0], real[0])
    tail = shown[shown.index("…") + 1 :]
    start = next(i for i, line in enumerate(real) if line.startswith("Conversations:"))
    assert len(real) - start == len(tail)
    for doc_line, real_line in zip(tail, real[start:], strict=True):
        assert _same(doc_line, real_line), (doc_line, real_line)

    run_id = re.search(r"run (run-\S+)", real[0]).group(1)
    report = json.loads(cli("report", run_id, "--format", "json", env=env, cwd=tmp_path).stdout)
    example = json.loads(re.findall(r"```json\n(.*?)```", SECTION, re.S)[0])
    assert example["summary"]["conversations"] == report["summary"]["conversations"]
    (entry,) = example["conversations"]
    (real_entry,) = report["conversations"]
    assert _same(entry["conversation_id"], real_entry["conversation_id"])
    assert _without_ids(entry) == _without_ids({**real_entry, "turns": real_entry["turns"][:1]})
    # what the prose says of the run: two case runs, four results, fl-d3-006 counted once
    summary = report["summary"]
    assert (summary["case_count"], len(report["results"]), summary["taxonomy_counts"]) == (
        2, 4, {"UNCONFIRMED_ACTION": 1}
    )  # fmt: skip


def test_without_the_policy_the_conversation_passes_as_the_page_says(tmp_path: Path) -> None:
    domain = domain_with_turns(tmp_path)
    env = {"TRACELADDER_DB": str(tmp_path / "store.duckdb")}
    done = cli(
        "run", "--domain", str(domain), "--model", "sim:oracle", "--case", "fl-d3-006", env=env, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-2000:]
    said = re.search(r"reads `(Conversations: [^`]+)` and lists\s+none", SECTION.replace("\n", " "))
    assert said is not None
    printed = cli("report", env=env, cwd=tmp_path).stdout.splitlines()
    assert printed[-1] == said.group(1)
