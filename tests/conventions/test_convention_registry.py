"""The conventions registry: one rule for a span's role, and conventions as plug-ins (issue 20,
point 1).

* Every span of every real capture (plain clients and frameworks) is stored with the role
  `registry.role_of` gives it (what the extraction uses; the stored `role` is what the trace
  index counts as model turns and the judge reads as LLM spans): one rule, written once.
* An installed convention (tests/plugins/toy_convention: one module and one entry point) reads
  a framework nothing else reads — only when named in TRACELADDER_CONVENTIONS (opt-in).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import duckdb

from tests.conftest import ROOT, cli
from tests.otlp_helpers import req_json, span_json
from traceladder.extract.conventions import SpanView, registry

FIXTURES = ROOT / "tests" / "fixtures"
TOY = str(ROOT / "tests" / "plugins" / "toy_convention")


def test_every_captured_span_is_stored_with_the_role_the_conventions_give_it(tmp_path):
    db = tmp_path / "all.duckdb"
    files = sorted(str(p) for p in FIXTURES.glob("*/*/*/collector-traces.jsonl"))
    assert len(files) > 70
    # one decoding process: the roles stored are the same for any count (decision 801)
    result = cli("ingest", "--db", str(db), "--processes", "1", *files)
    assert result.returncode == 0, result.stderr
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(
            "SELECT span_id, parent_span_id, name, kind, start_ns, end_ns, status_code, status_message,"
            " attributes, events, scope_name, role FROM spans"
        ).fetchall()
    finally:
        con.close()
    differ, roles = [], {}
    for *fields, role_stored in rows:
        view = SpanView(*fields[:8], json.loads(fields[8]), json.loads(fields[9] or "[]"), fields[10])
        decided = registry.role_of(view)
        role_in_python = decided[0] if decided is not None else None
        roles[role_in_python] = roles.get(role_in_python, 0) + 1
        if role_in_python != role_stored:
            differ.append((view.scope_name, view.name, role_in_python, role_stored))
    assert differ == []
    assert roles["llm"] > 200 and roles["tool"] > 200  # the comparison covered both kinds


def _toy_trace(path: Path) -> Path:
    spans = [
        span_json(spanId="00000000000000a1", parentSpanId="", name="toy run", attributes=[]),
        span_json(
            spanId="00000000000000a2", parentSpanId="00000000000000a1", name="toy step",
            attributes=[
                {"key": "toy.tool", "value": {"stringValue": "get_weather"}},
                {"key": "toy.args", "value": {"stringValue": '{"location": "Paris"'}},
                {"key": "toy.result", "value": {"stringValue": "sunny"}},
            ],
        ),
    ]  # fmt: skip
    path.write_bytes(req_json(*spans))
    return path


def _env(conventions: str | None) -> dict[str, str]:
    env = {"PYTHONPATH": os.pathsep.join(p for p in (TOY, os.environ.get("PYTHONPATH", "")) if p)}
    if conventions is not None:
        env["TRACELADDER_CONVENTIONS"] = conventions
    return env


def test_an_installed_convention_reads_its_framework_only_when_named(tmp_path):
    trace = _toy_trace(tmp_path / "toy.json")
    calls = "SELECT tool_name, arguments_raw, result, convention FROM tool_calls"
    for named, expected in (
        (None, []),
        ("toyframework", [{"tool_name": "get_weather", "arguments_raw": '{"location": "Paris"',
                           "result": "sunny", "convention": "toyframework"}]),
    ):  # fmt: skip
        db = tmp_path / f"{named}.duckdb"
        env = _env(named)
        assert cli("ingest", "--db", str(db), str(trace), env=env).returncode == 0
        out = cli("sql", calls, "--db", str(db), "--json", env=env)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout) == expected
    # and the ladder judges what it read: arguments that are not JSON fail rung 1 with no schema
    env = _env("toyframework")
    assert cli("evaluate", "--db", str(tmp_path / "toyframework.duckdb"), env=env).returncode == 0
    out = cli("sql", "SELECT verdict, settled_at FROM results", "--db", str(tmp_path / "toyframework.duckdb"),
              "--json", env=env)  # fmt: skip
    assert json.loads(out.stdout) == [{"verdict": "FAIL", "settled_at": 1}]


def test_naming_a_convention_that_is_not_installed_is_one_line_and_exit_2(tmp_path):
    trace = _toy_trace(tmp_path / "toy.json")
    result = cli("ingest", "--db", str(tmp_path / "s.duckdb"), str(trace), env=_env("nosuchthing"))
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert "TRACELADDER_CONVENTIONS" in result.stderr and "nosuchthing" in result.stderr
