"""Strict JSON out, exit 3 never for input: a trace's arguments of `NaN` or `1e999` are refused
with the trace named (Python would write bare `NaN` / `Infinity` into cases.jsonl, which is not
JSON), as is a lone surrogate (`"\\ud800"`, not UTF-8) — exit 2, or skipped with `--skip-bad`;
NaN and infinities read from a store are shown as such by `trend`, in strict JSON, never a crash."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from conftest import cli, cli_in_process
from recorded_traces import trace_spans, write_traces

OPEN = [{"type": "function", "name": "get_order", "parameters": {"type": "object"}}]
GOOD = trace_spans(1, "Where is order W1?", [("get_order", '{"order_id": "W1"}', "{}", True)], tools=OPEN)


def strict(text: str):
    def refuse(constant: str):
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def ingest(tmp_path: Path, *traces: list) -> Path:
    db = tmp_path / "traces.duckdb"
    done = cli_in_process(
        "ingest", str(write_traces(tmp_path / "traces.json", list(traces))), "--db", str(db)
    )
    assert done.returncode == 0, done.stderr
    return db


@pytest.mark.parametrize(
    ("raw", "says"),
    [('{"order_id": "W2", "n": NaN}', "its arguments hold NaN or an infinity"),
     ('{"order_id": "W2", "n": 1e999}', "its arguments hold NaN or an infinity"),
     ('{"order_id": "W2\\ud800"}', "its arguments or result hold a lone surrogate")],
    ids=["nan", "1e999", "lone-surrogate"],
)  # fmt: skip
def test_arguments_json_cannot_carry_are_refused_with_the_trace_named(tmp_path, raw, says):
    bad = trace_spans(9, "Look up W2", [("get_order", raw, "{}", True)], tools=OPEN)
    db = ingest(tmp_path, GOOD, bad)
    out = tmp_path / "suite"
    done = cli("cases", "from-traces", "--db", str(db), "--out", str(out))
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"trace {'9'.zfill(32)}: call 1 get_order: {says}" in lines[0], done.stderr
    skipped = cli("cases", "from-traces", "--db", str(db), "--out", str(out), "--skip-bad")
    assert skipped.returncode == 0, skipped.stderr
    for name in ("cases.jsonl", "responses.jsonl"):
        for line in (out / name).read_text(encoding="utf-8").splitlines():
            strict(line)


@pytest.mark.parametrize("weight", ["NaN", "Infinity", "-Infinity"])
def test_trend_shows_non_finite_numbers_from_a_store_and_never_crashes(tmp_path, weight):
    db = ingest(
        tmp_path, GOOD, trace_spans(2, "Where is W2?", [("get_order", '{"order_id": "W2"}', "{}", True)])
    )
    assert cli_in_process("evaluate", "--db", str(db), "--no-judge").returncode == 0
    with duckdb.connect(str(db)) as con:  # a store written by others
        con.execute(f"UPDATE trace_results SET sample_weight = '{weight}'::DOUBLE")
    table = cli("trend", "--db", str(db))
    assert table.returncode == 0, table.stderr
    document = cli("trend", "--db", str(db), "--format", "json")
    assert document.returncode == 0, document.stderr
    bucket = strict(document.stdout)["buckets"][0]
    assert bucket["traces"] == ("NaN" if weight == "NaN" else weight)
