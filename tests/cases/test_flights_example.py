"""examples/flights: seed 2's flight-booking example as a declarative domain with 12 English cases.
Its worked trace (two searches with the wrong date, a booking with an extra `seat`), played by a
scripted model behind the real `openai` client, goes through the whole pipeline — spans, store,
ladder, report — and the seed's numbers come out of the report: rung 3 strict 0.33, rung 4
positional 0.17 and optimal 0.33."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import ROOT, cli, cli_in_process, rows
from scripted_server import ModelServer

FLIGHTS = ROOT / "examples" / "flights"


def test_the_example_validates_and_the_golden_model_passes_it(tmp_path):
    assert cli("domain", "validate", "--domain", "examples/flights").stdout.startswith(
        "domain_validation=passed"
    )
    checked = cli("cases", "validate", "--domain", "dir:examples/flights")
    assert checked.returncode == 0, checked.stderr
    db = tmp_path / "flights.duckdb"
    done = cli_in_process(
        "run", "--domain", "examples/flights", "--model", "sim:oracle", "--db", str(db), "--no-judge"
    )
    assert done.returncode == 0, done.stderr
    verdicts = rows(db, "SELECT dimension, verdict, count(*) FROM case_results GROUP BY ALL ORDER BY ALL")
    assert verdicts == [("D1", "PASS", 2), ("D2", "PASS", 5), ("D3", "PASS", 5)]


def test_the_seed_worked_trace_gives_the_seed_numbers_through_the_pipeline(tmp_path):
    prompt = tmp_path / "prompt.txt"
    prompt.write_text((FLIGHTS / "system_prompt.txt").read_text() + "[[worked-trace]]\n")
    db = tmp_path / "worked.duckdb"
    with ModelServer(FLIGHTS) as model:
        done = cli("run", "--domain", "examples/flights", "--case", "fl-d3-001", "--model", "flight-agent",
                   "--base-url", model.url, "--system-prompt", str(prompt), "--db", str(db), "--no-judge")  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(Path(re.search(r"^report_path=(.+)$", done.stdout, re.M).group(1)).read_text())  # type: ignore[union-attr]
    (result,) = report["results"]
    scores = {r["name"]: {k: round(v, 2) for k, v in r["scores"].items()} for r in result["rungs"]}
    assert scores["trajectory"]["strict"] == 0.33
    assert scores["partial_credit"] == {"positional": 0.17, "optimal": 0.33}
    assert (result["verdict"], result["settled_at"]) == ("FAIL", 1)  # rung 1: the extra seat field
    # rung 1 classes the extra seat as rung 2 does (PARAM_UNEXPECTED); the headline is the trace's
    # dominant class, rung 2's wrong date
    headline = result["explanation"]
    assert headline.startswith("FAIL at rung 1 (schema): PARAM_WRONG_VALUE"), headline
    assert rows(db, "SELECT param, code FROM findings WHERE rung = 1") == [("seat", "PARAM_UNEXPECTED")]
    assert rows(
        db,
        "SELECT param, code, expected, actual FROM findings WHERE rung = 2 AND param IS NOT NULL "
        "ORDER BY param",
    ) == [  # fmt: skip
        ("date", "PARAM_WRONG_VALUE", '"2026-11-02"', '"2026-11-03"'),
        ("seat", "PARAM_UNEXPECTED", None, '"12A"'),
    ]
    # the spans the store holds: three executions, none of which the recording answered
    assert rows(db, "SELECT tool_name, status, error_type FROM tool_calls ORDER BY ordinal") == [
        ("search_flights", "error", "no_recorded_result"),
        ("search_flights", "error", "no_recorded_result"),
        ("book_flight", "error", "no_recorded_result"),
    ]
