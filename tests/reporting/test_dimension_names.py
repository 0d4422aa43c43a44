"""D1, D2, … mean what each suite says they mean: the shipped retail suite's D1 is tool selection,
a suite recorded from traces calls D1 "when to call". A run records its suite's names; its report
(JSON, text, HTML) and a comparison of two of its runs say them beside the codes. Through the real
CLI on the simulated model."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import cli, cli_in_process, rows
from recorded_traces import trace_spans, write_traces

RETAIL = {
    "D1": "tool selection",
    "D2": "parameter fill",
    "D3": "when to call",
    "D4": "request/confirm chains",
}


def run(db: Path, *args: str) -> str:
    done = cli("run", "--db", str(db), "--model", "sim:oracle", "--no-judge", *args)
    assert done.returncode == 0, done.stderr
    return re.search(r"^run_id=(\S+)$", done.stdout, re.M).group(1)  # type: ignore[union-attr]


def report(db: Path, run_id: str, fmt: str) -> str:
    done = cli("report", run_id, "--db", str(db), "--format", fmt, "--output", str(db.parent / f"r.{fmt}"))
    assert done.returncode == 0, done.stderr
    return (db.parent / f"r.{fmt}").read_text()


def recorded_suite(tmp_path: Path) -> Path:
    """A suite recorded from two traces: one call (D2 selection/fill) and a chain of two (D3)."""
    traces = [
        trace_spans(1, "Where is order W1?", [("get_order", '{"order_id": "W1"}', '{"status": "pending"}', True)]),
        trace_spans(2, "Is job J7 done?", [
            ("get_status", '{"job_id": "J7"}', '{"state": "running"}', True),
            ("get_status", '{"job_id": "J7"}', '{"state": "done"}', True),
        ]),
    ]  # fmt: skip
    source = tmp_path / "traces.duckdb"
    done = cli_in_process("ingest", str(write_traces(tmp_path / "traces.json", traces)), "--db", str(source))
    assert done.returncode == 0, done.stderr
    suite = tmp_path / "suite"
    done = cli_in_process("cases", "from-traces", "--db", str(source), "--out", str(suite))  # set-up
    assert done.returncode == 0, done.stderr
    return suite


def test_the_shipped_suite_names_its_four_dimensions_in_every_rendering(tmp_path):
    db = tmp_path / "retail.duckdb"
    run_id = run(db, "--case", "fc-d1-001", "--case", "fc-d4-001")
    document = json.loads(report(db, run_id, "json"))
    assert document["summary"]["dimension_names"] == RETAIL
    assert list(document["summary"]["dimensions"]) == ["D1", "D2", "D3", "D4"]
    text = report(db, run_id, "text")
    assert re.search(r"D1 tool selection\s.*\b1\b", text), text
    assert "D4 request/confirm chains" in text
    html = report(db, run_id, "html")
    assert "D1 tool selection" in html and "D4 request/confirm" in html


def test_a_recorded_suite_names_its_dimensions_as_it_declares_them(tmp_path):
    suite = recorded_suite(tmp_path)
    db = tmp_path / "replay.duckdb"
    args = ("--domain", str(suite), "--cases", str(suite / "cases.jsonl"))
    first, second = run(db, *args), run(db, *args)
    stored = rows(db, f"SELECT selection->>'$.dimension_names' FROM runs WHERE run_id = '{first}'")
    assert json.loads(stored[0][0]) == {"D1": "when to call", "D2": "selection/fill", "D3": "chain"}

    document = json.loads(report(db, first, "json"))
    assert document["summary"]["dimension_names"] == {
        "D1": "when to call",
        "D2": "selection/fill",
        "D3": "chain",
    }
    text = report(db, first, "text")
    assert "D2 selection/fill" in text and "D3 chain" in text
    assert "tool selection" not in text  # the shipped suite's meaning of D1 is not this suite's
    html = report(db, first, "html")
    assert "D2 selection/fill" in html and "tool selection" not in html

    compared = cli("compare", first, second, "--db", str(db))
    assert compared.returncode == 0, compared.stderr
    assert re.search(r"^D2 selection/fill\s+100\.0%", compared.stdout, re.M), compared.stdout
    as_json = cli("compare", first, second, "--db", str(db), "--format", "json")
    titles = {r["dimension"]: r["title"] for r in json.loads(as_json.stdout)["dimensions"]}
    assert titles == {"all": None, "D2": "selection/fill", "D3": "chain"}
