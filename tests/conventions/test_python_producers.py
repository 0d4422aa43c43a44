"""What the Python producers of issue 32 (Bedrock Converse through the botocore instrumentation,
LlamaIndex, AutoGen AgentChat) do beyond what test_frameworks.py checks for every capture: the
copies they repeat merge into one call by call id, with the result the tool returned; calls whose
arguments were never recorded are never judged malformed; a framework's tool span and the
`execute_tool` span below it of the function it runs are one call."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter

import pytest

from tests.conventions.test_conventions import decode
from tests.conventions.test_frameworks import FIXTURES, FRAMEWORKS, _bodies, calls_of, expected
from traceladder.extract.conventions import SpanView, extract_trace

BEDROCK = [f for f in FIXTURES if f.startswith("bedrock-botocore/")]


def _log_bodies(fixture: str) -> list[dict]:
    out = []
    for line in (FRAMEWORKS / fixture / "collector-logs.jsonl").read_text().splitlines():
        for rl in json.loads(line)["resourceLogs"]:
            for sl in rl["scopeLogs"]:
                out.extend(sl["logRecords"])
    return out


def _kv(value: dict) -> object:
    """An OTLP AnyValue as Python."""
    if "kvlistValue" in value:
        return {kv["key"]: _kv(kv["value"]) for kv in value["kvlistValue"].get("values", [])}
    if "arrayValue" in value:
        return [_kv(v) for v in value["arrayValue"].get("values", [])]
    return next(iter(value.values()), None)


@pytest.mark.parametrize("fixture", [f for f in BEDROCK if f.split("/")[1].startswith(("chain", "parallel"))])
def test_bedrock_history_repeats_every_call_and_each_is_read_once_with_its_result(fixture):
    """Each request's log records repeat every earlier call — as `toolUse` blocks and again as
    `tool_calls` in one `gen_ai.assistant.message` — so a call id is written 2×(requests after it)
    + 1 times; it is read once, and its result is the tool's text, not the Converse block list."""
    copies: Counter[str] = Counter()
    for record in _log_bodies(fixture):
        body = _kv(record.get("body", {}))
        if isinstance(body, dict):
            message = body.get("message", body)
            copies.update(c["id"] for c in message.get("tool_calls") or [])
            copies.update(b["toolUse"]["toolUseId"] for b in message.get("content") or [] if "toolUse" in b)
    sent = expected(fixture)["sent_calls"]
    assert all(copies[c["id"]] >= 3 for c in sent)  # the fixture really repeats them
    calls = calls_of(fixture)
    assert [c.call_id for c in calls] == [c["id"] for c in sent]
    for call in calls:
        assert call.result is not None and not call.result.startswith("[{"), call
        assert json.loads(call.result)  # the tool's JSON text, as the loop sent it back


def test_autogen_calls_without_arguments_count_pair_and_are_never_judged_malformed(tmp_path):
    """AutoGen's execute_tool spans name the tool and the call id, never the arguments: every
    call is a row with its execution status, rung 1 is not_evaluated naming why, and no call is
    a PARAM_WRONG_FORMAT (absent is not invalid)."""
    from tests.conftest import cli, cli_in_process
    from tests.conventions.test_frameworks import sql

    db = tmp_path / "s.duckdb"
    fixtures = [f for f in FIXTURES if f.startswith("autogen/")]
    files = sorted(str(p) for f in fixtures for p in (FRAMEWORKS / f).glob("collector-*.jsonl"))
    assert (
        cli_in_process("ingest", "--db", str(db), "--processes", "1", *files).returncode == 0
    )  # set-up in one process: decision 801
    assert cli("evaluate", "--db", str(db)).returncode == 0
    rows = sql(db, "SELECT call_id, arguments_raw, status FROM tool_calls")
    executed = {
        c["id"]
        for f in fixtures
        for c in expected(f)["sent_calls"]
        if _parsed_or_none(c["arguments_raw"]) is not None
    }
    assert sorted(r["call_id"] for r in rows) == sorted(
        c["id"] for f in fixtures for c in expected(f)["sent_calls"] if c["id"] in executed
    )
    assert all(r["arguments_raw"] is None for r in rows)
    # the schema-violating call failed inside its tool span: paired, with the error
    assert {r["status"] for r in rows if r["call_id"] == "call_e1"} == {"error"}
    rung1 = sql(
        db,
        "SELECT DISTINCT r.status, r.explanation FROM rung_results r JOIN tool_calls USING (trace_id) "
        "WHERE r.rung = 1 AND r.explanation LIKE '%calls could not be checked%'",
    )
    assert rung1 and all(r["status"] == "not_evaluated" for r in rung1)
    assert all("recorded no arguments" in r["explanation"] for r in rung1)
    verdicts = sql(
        db, "SELECT DISTINCT verdict FROM results WHERE trace_id IN (SELECT trace_id FROM tool_calls)"
    )
    assert verdicts == [{"verdict": "NOT_EVALUATED"}]
    assert sql(db, "SELECT count(*) AS n FROM findings") == [{"n": 0}]


def _parsed_or_none(text: str) -> str | None:
    """The text when it parses as JSON (AutoGen runs only such calls), else None."""
    try:
        json.loads(text)
    except ValueError:
        return None
    return text


def _execute_tool_span(tool: SpanView, span_id: str, parent: str, call_id: str) -> SpanView:
    """The `execute_tool` span traceladder's `call_tool` writes for the function a framework's
    tool runs (the agent under test passes the model's call id)."""
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool.attributes["tool.name"],
        "gen_ai.tool.call.id": call_id,
        "gen_ai.tool.call.arguments": tool.attributes["input.value"],
        "gen_ai.tool.call.result": tool.attributes.get("output.value"),
    }
    name = f"execute_tool {tool.attributes['tool.name']}"
    return dataclasses.replace(tool, span_id=span_id, parent_span_id=parent, name=name, attributes=attributes)


@pytest.mark.parametrize("between", [0, 1, 3])
def test_an_openinference_tool_span_and_call_tools_span_below_it_are_one_call(between):
    """LlamaIndex's TOOL spans (OpenInference, no call id) with, `between` plain spans below each
    (the function's own, a thread hop), the `execute_tool` span of `call_tool` for that call: one
    execution seen twice, so each call counts once — not only when the TOOL span is the direct
    parent."""
    spans, _ = decode(_bodies("llamaindex/parallel-plain", "traces"), [])
    tools = sorted(
        (s for s in spans if s.attributes.get("openinference.span.kind") == "TOOL"), key=lambda s: s.start_ns
    )
    sent = expected("llamaindex/parallel-plain")["sent_calls"]
    added = []
    for i, (tool, call) in enumerate(zip(tools, sent, strict=True)):
        parent = tool.span_id
        for depth in range(between):
            plain = dataclasses.replace(
                tool,
                span_id=f"{i:08x}{depth:08x}",
                parent_span_id=parent,
                name="fn",
                attributes={},
                events=[],
            )
            added.append(plain)
            parent = plain.span_id
        added.append(_execute_tool_span(tool, f"{i:08x}ffffffff", parent, call["id"]))
    calls = extract_trace(spans + added).calls
    assert [(c.tool_name, c.call_id, c.arguments_raw) for c in calls] == [
        (c["name"], c["id"], c["arguments_raw"]) for c in sent
    ]
    assert all(c.result is not None for c in calls)


def test_a_tool_span_below_a_model_call_inside_a_tool_stays_its_own_call():
    """A tool that runs an agent: the inner call is the inner model's, not a copy of the outer."""
    spans, _ = decode(_bodies("llamaindex/parallel-plain", "traces"), [])
    tool = min(
        (s for s in spans if s.attributes.get("openinference.span.kind") == "TOOL"), key=lambda s: s.start_ns
    )
    llm = next(s for s in spans if s.attributes.get("openinference.span.kind") == "LLM")
    inner_llm = dataclasses.replace(llm, span_id="00000000aaaaaaaa", parent_span_id=tool.span_id)
    inner = _execute_tool_span(tool, "00000000bbbbbbbb", inner_llm.span_id, "call_inner")
    before = extract_trace(spans).calls
    after = extract_trace([*spans, inner_llm, inner]).calls
    assert len(after) > len(before)
