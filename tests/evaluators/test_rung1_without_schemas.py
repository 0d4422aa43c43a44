"""Rung 1 never passes a call it could not check, and needs no schema to fail one that can never
run (issue 20, class 6).

Real producer captures through the real CLI (`evaluate` as a process of its own; the `ingest` and
`sql` around it are set-up, run in process): every producer's
`invalid_json` trace fails rung 1 with PARAM_WRONG_FORMAT on exactly the call whose argument text
the scripted model sent broken — also the producers that record no tool definitions at all —
and a trace whose definitions were captured without a parameters schema is `not_evaluated` at
rung 1, never "valid". The registry rules are checked directly below.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import cli, cli_in_process
from tests.producers import expected, scenarios
from traceladder.evaluate.rungs.schema import SchemaRegistry, check_calls, check_shapes
from traceladder.evaluate.rungs.types import Call

INVALID = [p for p in scenarios() if p.name == "invalid_json"]


def sql(db, query):
    result = cli_in_process("sql", query, "--db", str(db), "--json")  # reads rows back: set-up
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def ingest_and_evaluate(tmp_path, fixture):
    db = tmp_path / "s.duckdb"
    files = sorted(str(f) for f in fixture.glob("collector-*.jsonl"))
    assert cli_in_process("ingest", "--db", str(db), *files).returncode == 0  # set-up
    result = cli("evaluate", "--db", str(db))
    assert result.returncode == 0, result.stderr
    return db


@pytest.mark.parametrize("fixture", INVALID, ids=lambda p: p.parent.name)
def test_an_invalid_json_call_fails_rung_1_with_or_without_definitions(tmp_path, fixture):
    sent = expected(fixture)
    broken = [c for c in sent["calls"] if not _is_object(c["arguments_raw"])]
    assert len(broken) == 1  # the script sends one broken call
    db = ingest_and_evaluate(tmp_path, fixture)
    [verdict] = sql(db, "SELECT verdict, settled_at FROM results")
    assert verdict == {"verdict": "FAIL", "settled_at": 1}
    findings = sql(db, "SELECT code, tool, actual FROM findings WHERE rung = 1")
    assert findings == [
        {
            "code": "PARAM_WRONG_FORMAT",
            "tool": broken[0]["name"],
            "actual": json.dumps(broken[0]["arguments_raw"]),
        }
    ]


def test_definitions_without_a_schema_leave_rung_1_not_evaluated_never_valid(tmp_path):
    # openai-v2's execute_tool spans describe their tools (gen_ai.tool.description) without a
    # parameters schema; the trace records no tool list a request sent.
    fixture = next(
        p for p in scenarios() if p.parent.name == "otel-openai-v2-default" and p.name == "parallel"
    )
    db = ingest_and_evaluate(tmp_path, fixture)
    offered = sql(db, "SELECT DISTINCT offered, parameters IS NULL AS no_schema FROM tool_definitions")
    assert offered == [{"offered": False, "no_schema": True}]
    [rung1] = sql(db, "SELECT status, explanation FROM rung_results WHERE rung_name = 'schema'")
    assert rung1["status"] == "not_evaluated"
    assert "without a readable parameters schema" in rung1["explanation"]
    assert sql(db, "SELECT count(*) AS n FROM findings WHERE rung = 1") == [{"n": 0}]


def _is_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


def call(name: str, raw: str, ordinal: int = 1) -> Call:
    try:
        arguments, parsed = json.loads(raw), True
    except ValueError:
        arguments, parsed = None, False
    return Call(name, arguments, raw=raw, ordinal=ordinal, parsed=parsed)


SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def test_without_schemas_only_the_shape_is_checked():
    ok = check_shapes([call("get_time", '{"city": "Paris"}')], "no tool definitions")
    assert (ok.status, ok.explanation) == ("not_evaluated", "not evaluated: no tool definitions")
    for raw in ('{"city": "Paris"', "[1, 2]", '"Paris"'):
        bad = check_shapes([call("get_time", '{"city": "Paris"}', 1), call("get_time", raw, 2)], "none")
        assert bad.status == "fail"
        assert [(f.code, f.ordinal) for f in bad.findings] == [("PARAM_WRONG_FORMAT", 2)]


def test_a_tool_with_no_readable_schema_is_not_checked_but_its_shape_is():
    registry = SchemaRegistry({"get_time": SCHEMA}, "trace", trusted=False, unreadable=frozenset({"book"}))
    mixed = check_calls([call("get_time", '{"city": "Paris"}', 1), call("book", '{"x": 1}', 2)], registry)
    assert mixed.status == "not_evaluated"
    assert "book: its definition was captured without a readable parameters schema" in mixed.explanation
    assert [c.status for c in mixed.checks] == ["match", "not_evaluated"]
    assert not registry.valid(call("book", '{"x": 1}'))  # never proven valid
    assert check_calls([call("book", '{"x": 1')], registry).status == "fail"
    violating = check_calls([call("get_time", '{"city": 3}', 1), call("book", "{}", 2)], registry)
    assert violating.status == "fail"  # a real violation is found whatever else could not be checked


def test_definitions_seen_only_on_tool_spans_do_not_know_every_tool():
    registry = SchemaRegistry({"get_time": SCHEMA}, "trace (tool spans only)", trusted=False, complete=False)
    valid = check_calls([call("get_time", '{"city": "Paris"}')], registry)
    assert valid.status == "pass" and "only tools that ran" in valid.explanation
    other = check_calls([call("get_weather", '{"location": "Paris"}')], registry)
    assert other.status == "not_evaluated" and not any(f.code == "UNKNOWN_TOOL" for f in other.findings)
    complete = SchemaRegistry({"get_time": SCHEMA}, "trace", trusted=False)
    assert [f.code for f in check_calls([call("get_weather", "{}")], complete).findings] == ["UNKNOWN_TOOL"]
