"""A tool definition captured from someone else's trace may carry a regular expression that makes
Python's backtracking `re` run for hours (`^(a+)+$` against a long argument). Its validators match
with RE2 instead: the verdict is right and comes at once; a pattern RE2 cannot run makes rung 1
`not_evaluated` with the reason; jsonschema's messages are kept word for word."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, rows
from jsonschema import Draft202012Validator
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from traceladder.evaluators.safe_regex import LinearRegexValidator, unusable

HOSTILE = "^(a+)+$"  # exponential for a backtracking engine on "aaa…a!"
LONG = "a" * 5_000


def agent_traces(path: Path, pattern: str, codes: list[str]) -> None:
    """One trace per code: a chat turn offering `lookup` (its `code` constrained by `pattern`),
    then the tool span calling it — written as the OTLP protobuf an exporter would send."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "someone-elses-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("their_agent")
    definitions = [
        {
            "type": "function",
            "name": "lookup",
            "parameters": {
                "type": "object",
                "properties": {"code": {"type": "string", "pattern": pattern}},
                "required": ["code"],
            },
        }
    ]
    for n, code in enumerate(codes):
        with tracer.start_as_current_span(
            "invoke_agent their-agent", attributes={"gen_ai.operation.name": "invoke_agent"}
        ):
            chat = {"gen_ai.operation.name": "chat", "gen_ai.tool.definitions": json.dumps(definitions)}
            with tracer.start_as_current_span("chat their-model", attributes=chat):
                pass
            call = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup",
                    "gen_ai.tool.call.id": f"c{n}", "gen_ai.tool.call.arguments": json.dumps({"code": code})}  # fmt: skip
            with tracer.start_as_current_span("execute_tool lookup", attributes=call):
                pass
    path.write_bytes(encode_spans(memory.get_finished_spans()).SerializeToString())


def traceladder(*args: str) -> subprocess.CompletedProcess[str]:
    """The real CLI. The timeout is a hang detector, not a speed claim: with `re`, the long
    argument below would take longer than the universe has existed."""
    return subprocess.run(
        [sys.executable, "-m", "traceladder", *args], cwd=ROOT, capture_output=True, text=True, timeout=240
    )


def judged(db: Path) -> dict[str, tuple[str, str]]:
    """argument code → (rung 1 status, rung 1 explanation)."""
    found = rows(
        db,
        "SELECT tc.arguments_raw, r.status, r.explanation FROM rung_results r JOIN tool_calls tc USING (trace_id) "
        "WHERE r.rung_name = 'schema'",
    )
    return {json.loads(raw)["code"]: (status, explanation) for raw, status, explanation in found}


def test_a_hostile_pattern_is_judged_right_and_at_once(tmp_path):
    db, spans = tmp_path / "live.duckdb", tmp_path / "t.pb"
    agent_traces(spans, HOSTILE, [LONG + "!", LONG])
    assert traceladder("ingest", "--db", str(db), str(spans)).returncode == 0
    done = traceladder("evaluate", "--db", str(db))
    assert done.returncode == 0, done.stderr
    verdicts = judged(db)
    assert verdicts[LONG][0] == "pass"
    assert verdicts[LONG + "!"][0] == "fail"
    findings = rows(db, "SELECT code, param, message FROM findings WHERE rung = 1")
    assert findings == [("PARAM_WRONG_FORMAT", "code", f"lookup: {LONG + '!'!r} does not match {HOSTILE!r}")]


@pytest.mark.parametrize("pattern", [r"^(a)\1$", r"^(?=a)a+$"], ids=["backreference", "lookahead"])
def test_a_pattern_re2_cannot_run_leaves_rung_one_not_evaluated_and_says_why(tmp_path, pattern):
    db, spans = tmp_path / "live.duckdb", tmp_path / "t.pb"
    agent_traces(spans, pattern, ["aa"])
    assert traceladder("ingest", "--db", str(db), str(spans)).returncode == 0
    done = traceladder("evaluate", "--db", str(db))
    assert done.returncode == 0, done.stderr
    assert "re2" not in done.stderr.lower()  # RE2's own error log stays off our stderr
    ((status, explanation),) = judged(db).values()
    assert status == "not_evaluated"
    assert "the definition of lookup cannot be used: pattern" in explanation
    assert "cannot be matched in linear time" in explanation


SCHEMAS = [
    {"type": "string", "pattern": "^W[0-9]{3}$"},
    {"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": False},
    {"type": "object", "patternProperties": {"^x_": {"type": "string"}}, "additionalProperties": False},
    {
        "type": "object",
        "patternProperties": {"^x_": {}, "^y_": {}},
        "additionalProperties": {"type": "integer"},
    },
    {"type": "object", "properties": {"s": {"type": "string", "pattern": "b+"}}, "required": ["s"]},
]
INSTANCES = ["W123", "W12", "xW123", 5, {}, {"a": 1}, {"a": "1"}, {"b": 2, "c": 3}, {"x_1": "v"}, {"x_1": 2},
             {"z": 1}, {"z": "1", "w": 2}, {"y_q": 0, "q": "no"}, {"s": "abba"}, {"s": "aa"}]  # fmt: skip


@pytest.mark.parametrize("schema", SCHEMAS, ids=range(len(SCHEMAS)))
def test_the_linear_validator_says_what_jsonschema_says(schema):
    reference, linear = Draft202012Validator(schema), LinearRegexValidator(schema)
    for instance in INSTANCES:
        want = sorted((e.message, list(e.absolute_path)) for e in reference.iter_errors(instance))
        got = sorted((e.message, list(e.absolute_path)) for e in linear.iter_errors(instance))
        assert got == want, instance


def test_what_makes_a_captured_schema_unusable():
    assert (
        unusable({"type": "object", "properties": {"code": {"type": "string", "pattern": HOSTILE}}}) is None
    )
    assert "linear time" in (unusable({"patternProperties": {r"(a)\1": {}}}) or "")
    assert "linear time" in (unusable({"$defs": {"d": {"pattern": "(?<=a)b"}}}) or "")
    # a property *named* pattern, and data that looks like a pattern, are not patterns
    assert unusable({"properties": {"pattern": {"type": "string"}}, "enum": [{"pattern": r"(a)\1"}]}) is None
    assert "unevaluatedProperties" in (
        unusable({"patternProperties": {"^x": {}}, "unevaluatedProperties": False}) or ""
    )
