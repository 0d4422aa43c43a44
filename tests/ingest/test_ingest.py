"""`traceladder ingest` end to end: every file format the real producers' captures come in,
idempotency, and bad files costing only themselves."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import producers
import pytest
from conftest import ROOT, cli, rows

from traceladder.files import jsonl_lines
from traceladder.receive.ingest.run import ingest
from traceladder.store.db import open_store


def calls(db: Path) -> list[tuple]:
    return rows(
        db,
        "SELECT trace_id, ordinal, tool_name, call_id, arguments_raw, result, status FROM tool_calls ORDER BY trace_id, ordinal",
    )


FORMATS = {
    "protobuf": lambda s: sorted(s.glob("traces-*.pb")) + sorted(s.glob("logs-*.pb")),
    "json-array": lambda s: sorted(s.glob("*.json")),
    "collector-jsonl": lambda s: sorted(s.glob("collector-*.jsonl")),
}


def _files(scenario: Path, fmt: str, tmp: Path, compress: bool) -> list[str]:
    chosen = [p for p in FORMATS[fmt](scenario) if p.name not in ("expected.json", "model-requests.json")]
    out = []
    for p in chosen:
        if compress:
            q = tmp / (p.name + ".gz")
            q.write_bytes(gzip.compress(p.read_bytes()))
            out.append(str(q))
        else:
            out.append(str(p))
    return out


@pytest.fixture(scope="module")
def blank_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with every migration applied and nothing in it, closed: what a fresh path becomes
    before the first batch (creating one cost ~0.1 s, 108 times in the test below)."""
    db = tmp_path_factory.mktemp("blank") / "blank.duckdb"
    with open_store(db):
        pass
    return db


@pytest.mark.parametrize("scenario", producers.scenarios(), ids=producers.scenario_id)
def test_every_format_gives_the_same_store_and_the_sent_calls(
    tmp_path: Path, scenario: Path, blank_store: Path
) -> None:
    # In-process through the ingest entry point (the CLI around it is tested below): 6 stores per
    # scenario, 18 scenarios, each a copy of one blank store (ingest into a fresh path is every
    # other ingest test's), each read once and compared with the reference read once.
    stores = {}
    for fmt in FORMATS:
        for compress in (False, True):
            db = tmp_path / f"{fmt}-{compress}.duckdb"
            shutil.copy(blank_store, db)
            with open_store(db) as store:
                summary = ingest(store, _files(scenario, fmt, tmp_path, compress))
            assert summary.problems == [] and summary.new_spans > 0, summary
            stores[(fmt, compress)] = db
    reference = stores[("protobuf", False)]
    span_sql = "SELECT trace_id, span_id, name, attributes, events FROM spans ORDER BY 1, 2"
    reference_spans, reference_calls = rows(reference, span_sql), calls(reference)
    for db in stores.values():
        if db != reference:
            assert rows(db, span_sql) == reference_spans
            assert calls(db) == reference_calls
    want = [(name, args) for name, _, args, _ in producers.expected_calls(scenario)]
    got = [(c[2], c[4]) for c in reference_calls]
    assert [n for n, _ in got] == [n for n, _ in want]
    for (_, got_args), (_, want_args) in zip(got, want, strict=True):
        assert got_args == want_args or json.loads(got_args) == json.loads(want_args)


def test_ingesting_twice_adds_nothing_and_repeats_inside_a_batch_count_once(tmp_path: Path) -> None:
    scenario = producers.FIXTURES / "otel-openai-v2-default" / "parallel"
    lines = jsonl_lines((scenario / "collector-traces.jsonl").read_text())
    doubled = tmp_path / "doubled.jsonl"
    doubled.write_text("\n".join(lines + lines) + "\n")  # every span twice in one file
    logs = scenario / "collector-logs.jsonl"
    db = tmp_path / "s.duckdb"
    first = cli("ingest", "--db", str(db), str(doubled), str(logs))
    assert first.returncode == 0, first.stderr
    assert "spans=14 (new 7)" in first.stdout and "logs=17 (new 17)" in first.stdout
    before = (rows(db, "SELECT count(*) FROM spans"), rows(db, "SELECT count(*) FROM log_records"), calls(db))
    again = cli("ingest", "--db", str(db), str(doubled), str(logs), str(scenario / "traces-001.pb"))
    assert again.returncode == 0, again.stderr
    assert "(new 0)" in again.stdout and "traces=0" in again.stdout
    assert (
        rows(db, "SELECT count(*) FROM spans"),
        rows(db, "SELECT count(*) FROM log_records"),
        calls(db),
    ) == before
    assert before[0] == [(7,)]


def test_a_trace_split_over_requests_and_signals_gets_the_same_calls(tmp_path: Path) -> None:
    # openai-v2 in its default mode puts tool calls only in log records: logs first, spans later,
    # each in its own ingest, must give what one ingest of everything gives.
    scenario = producers.FIXTURES / "otel-openai-v2-default" / "parallel"
    whole, split = tmp_path / "whole.duckdb", tmp_path / "split.duckdb"
    assert (
        cli(
            "ingest", "--db", str(whole), str(scenario / "traces-001.pb"), str(scenario / "logs-001.pb")
        ).returncode
        == 0
    )
    assert cli("ingest", "--db", str(split), str(scenario / "logs-001.pb")).returncode == 0
    assert cli("ingest", "--db", str(split), str(scenario / "traces-001.pb")).returncode == 0
    assert calls(split) == calls(whole) and len(calls(whole)) == 3


def test_a_bad_file_costs_only_itself(tmp_path: Path) -> None:
    folder = tmp_path / "exports"
    folder.mkdir()
    scenario = producers.FIXTURES / "openinference" / "parallel"
    shutil.copy(scenario / "traces-001.pb", folder / "a-good.pb")
    (folder / "b-truncated.pb").write_bytes((scenario / "traces-001.pb").read_bytes()[:-9])
    (folder / "c-bad.json").write_text('{"resourceSpans": [')
    (folder / "d-empty.pb").write_bytes(b"")
    (folder / "e-not-gzip.gz").write_bytes(b"\x1f\x8b\x08\x00garbage")
    lines = (scenario / "collector-traces.jsonl").read_text()
    (folder / "f-one-bad-line.jsonl").write_text('{"resourceSpans": [}\n' + lines)
    db = tmp_path / "s.duckdb"
    r = cli("ingest", "--db", str(db), str(folder), str(tmp_path / "missing.json"))
    assert r.returncode == 2
    problems = r.stderr.splitlines()
    assert len(problems) == 6, r.stderr
    assert "b-truncated.pb: not OTLP protobuf: invalid protobuf ExportTraceServiceRequest" in problems[0]
    assert "c-bad.json" in problems[1] and "invalid JSON" in problems[1]
    assert "d-empty.pb: is empty" in problems[2]
    assert "e-not-gzip.gz: cannot read" in problems[3]
    assert "f-one-bad-line.jsonl:1: invalid JSON" in problems[4]
    assert "missing.json: no such file" in problems[5]
    assert all(line.startswith("traceladder: ingest: ") for line in problems)
    # the good file and the good line were ingested (the same spans: stored once)
    assert rows(db, "SELECT count(*) FROM spans") == [(7,)]
    assert len(calls(db)) == 3


def test_stdin(tmp_path: Path) -> None:
    import subprocess
    import sys

    scenario = producers.FIXTURES / "openllmetry" / "parallel"
    db = tmp_path / "s.duckdb"
    data = gzip.compress((scenario / "collector-traces.jsonl").read_bytes())
    r = subprocess.run([sys.executable, "-m", "traceladder", "ingest", "--db", str(db), "-"], input=data,
                       capture_output=True, cwd=ROOT, timeout=120)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert rows(db, "SELECT count(*) FROM spans") == [(7,)]


def test_an_otlp_json_span_without_flags_is_stored_with_flags_zero(tmp_path: Path) -> None:
    # OTLP/JSON senders may omit a field at its default (proto3 JSON mapping); `flags` is one. It
    # used to abort the batch with exit 3 (a NULL cast to a non-nullable column).
    span = {
        "traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174", "name": "chat m",
        "kind": 3, "startTimeUnixNano": "1700000000000000000", "endTimeUnixNano": "1700000001000000000",
        "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}],
    }  # fmt: skip
    request = {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {}, "spans": [span]}]}]}
    path = tmp_path / "no-flags.json"
    path.write_text(json.dumps(request))
    db = tmp_path / "store.duckdb"
    result = cli("ingest", "--db", str(db), str(path))
    assert result.returncode == 0, result.stderr
    assert rows(db, "SELECT span_id, flags FROM spans") == [("eee19b7ec3c1b174", 0)]
