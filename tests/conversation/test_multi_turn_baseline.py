"""A multi-turn case through the baseline and the gate (issue 33: a multi-turn case run is one
case, its verdict the conversation's). An agent under test books the wrong flight on turn 2 and
passes turns 1 and 3: the progress line names turn 2's failure, `baseline init` must take its three runs as complete (each is one case run
however many turns it played), the locked baseline records the conversation's FAIL with the
deciding turn's class — not the last turn's PASS — and the gate compares a repetition with it."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import ROOT, cli, out_value

from conversation.turn_cases import CASE_ID, domain_with_turns

AGENT = ROOT / "tests" / "subject" / "agents" / "turn_two_books_the_wrong_flight.py"


def test_a_conversation_is_baselined_and_gated_as_one_case_with_its_own_verdict(tmp_path: Path) -> None:
    domain = domain_with_turns(tmp_path)
    db, folder = tmp_path / "b.duckdb", tmp_path / "baseline"
    runs = ["--domain", str(domain), "--model", "sim:oracle", "--case", CASE_ID, "--agent", f"{AGENT}:run"]
    init = cli("baseline", "init", "--db", str(db), *runs, "--runs", "3", "--dir", str(folder))
    assert init.returncode == 0, init.stderr[-2000:]
    review = json.loads((folder / "review.json").read_text())
    [failed] = review["reviews"]  # the one case, once: not one entry per turn
    assert (failed["case_id"], failed["failure_class"]) == (CASE_ID, "PARAM_HALLUCINATED_ID")
    failed["classification"] = "model_error"
    (folder / "review.json").write_text(json.dumps(review))
    canonical = review["run_id"]
    lock = cli(
        "baseline", "lock", "--db", str(db), "--canonical", canonical, "--consistency",
        str(folder / "consistency.json"), "--review", str(folder / "review.json"),
        "--output", str(folder / "baseline.json"),
    )  # fmt: skip
    assert lock.returncode == 0, lock.stderr[-2000:]
    baseline = json.loads((folder / "baseline.json").read_text())
    assert baseline["cases"] == {CASE_ID: {"verdict": "FAIL", "failure_class": "PARAM_HALLUCINATED_ID"}}
    consistency = json.loads((folder / "consistency.json").read_text())
    assert consistency["complete"] is True and len(consistency["runs"]) == 3

    again = cli("run", "--db", str(db), *runs)
    assert again.returncode in (0, 1), again.stderr[-2000:]
    # the progress line says what the turns' code rungs found: turn 2 failed (not the last turn's PASS)
    assert f"[1/1] {CASE_ID} turn 2 FAIL PARAM_HALLUCINATED_ID at rung 2" in again.stderr, again.stderr
    gate = cli(
        "gate",
        "--db",
        str(db),
        "--run",
        out_value(again, "run_id"),
        "--baseline",
        str(folder / "baseline.json"),
    )
    assert gate.returncode == 0, gate.stderr
    assert "gate passed" in gate.stdout and "pass rate 0.0%, baseline 0.0%" in gate.stdout
