"""Agent frameworks' traces, read exactly (issue 20).

Every fixture in tests/fixtures/frameworks was captured from a real framework and its real
instrumentation against the scripted model server (scripts/capture_producers/capture_framework.py),
plain and streaming, in four scenarios. What is compared is what the scripted server **sent**
(`expected.json` `sent_calls`, the tool list on the wire), never what the spans say:

* the calls: count, order, tool, call id and argument text, one row per call (no copy counted
  twice), except where the producer itself lost the model's text (`LOSSES`, each with its reason,
  asserted to the exact value that arrives instead — a loss is documented, never guessed);
* the tool definitions, wherever the producer recorded them: the schema the framework sent;
* the verdicts, through the real CLI (`evaluate --policy` as a process of its own; the `ingest`
  that fills the store and the `sql` that reads the rows back are set-up, run in process): a
  schema-violating or invalid-JSON call is never a PASS, a clean chain never fails rung 1, and no
  call read twice shows up as a DUPLICATE_CALL.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import cli, cli_in_process
from tests.conventions.test_conventions import decode
from traceladder.extract.conventions import ExtractedCall, ToolDefinition, extract_trace

FRAMEWORKS = Path(__file__).resolve().parents[1] / "fixtures" / "frameworks"
FIXTURES = sorted(str(p.parent.relative_to(FRAMEWORKS)) for p in FRAMEWORKS.glob("*/*/expected.json"))
PRODUCERS = sorted({f.split("/")[0] for f in FIXTURES})

# What a producer records instead of the model's argument text, and why (docs/conventions.md).
REPAIRED = "LangChain's streaming parser closes the brace before anything is recorded"
EMPTIED = "Strands replaces arguments that do not parse by {} before recording them"
STOPPED = "ADK stops inside call_llm on arguments that do not parse: the call is recorded nowhere"
UNTYPED = (
    "OTel GenAI tool_call parts hold arguments as an object or as the model's text: the SDK and "
    "OpenLLMetry put a string `input` there as it is, so it reads as argument text"
)
PARTIAL = (
    "the anthropic SDK's stream accumulator parses input_json_delta text in partial mode: "
    "the broken text becomes an object before anything records it (and the tool runs)"
)
# (producer, scenario-mode) → (call id, what arrives instead — None: nothing —, why)
LOSSES: dict[tuple[str, str], tuple[str, str | None, str]] = {
    **{(p, "invalid_json-stream"): ("call_c1", '{"location": "Paris"}', REPAIRED)
       for p in ("langgraph-openinference", "langgraph-openllmetry")},
    **{(p, s): ("call_c1", "{}", EMPTIED)
       for p in ("strands", "strands-latest") for s in ("invalid_json-plain", "invalid_json-stream")},
    **{("google-adk", s): ("call_c1", None, STOPPED) for s in ("invalid_json-plain", "invalid_json-stream")},
    **{(p, "invalid_json-stream"): ("call_c1", '{"location": "Paris"}', PARTIAL)
       for p in ("anthropic-sdk", "anthropic-openinference")},
    **{(p, "invalid_json-plain"): ("call_c1", '{"location": "Paris"', UNTYPED)
       for p in ("anthropic-sdk", "anthropic-openllmetry")},
}  # fmt: skip
# Bedrock Converse: `input` is a document; the botocore instrumentation's log records hold it as
# it is (an object, or the string the server had to send), so a string reads as argument text
LOSSES[("bedrock-botocore", "invalid_json-plain")] = ("call_c1", '{"location": "Paris"', UNTYPED)
# AutoGen parses a call's arguments before it opens the tool span: text that does not parse
# reaches no span (the agent answers the model with an error, and nothing records it)
AUTOGEN_PARSES_FIRST = "AutoGen parses the arguments before its tool span opens: the call is recorded nowhere"
LOSSES.update(
    {
        ("autogen", s): ("call_c1", None, AUTOGEN_PARSES_FIRST)
        for s in ("invalid_json-plain", "invalid_json-stream")
    }
)

# LlamaIndex with OpenLLMetry: a streamed model step's output is not recorded; the call comes from
# the call_tool step, whose arguments LlamaIndex already parsed leniently (and ran the tool with)
LLAMA_REPAIRED = (
    "LlamaIndex repairs streamed arguments that do not parse; OpenLLMetry records only the repair"
)
LOSSES[("llamaindex-openllmetry", "invalid_json-stream")] = (
    "call_c1",
    '{"location": "Paris"}',
    LLAMA_REPAIRED,
)

# producers whose spans never record a call's arguments (rung 1 is not_evaluated, never a FAIL)
NO_ARGUMENTS: dict[str, str] = {
    "autogen": "AutoGen's execute_tool spans carry the tool name and call id, never the arguments",
}


# (producer, mode) whose calls reach no trace with their ids, and why (docs/conventions.md)
NO_IDS: dict[tuple[str, str], str] = {
    ("litellm", "stream"): "LiteLLM logs a streamed request on a thread outside the caller's context, "
    "so each request is a trace of its own and keeps no raw choices; the ids are only in the next "
    "request's history, in another trace",
}


def expected(fixture: str) -> dict[str, Any]:
    return json.loads((FRAMEWORKS / fixture / "expected.json").read_text())


def _bodies(fixture: str, signal: str) -> list[tuple[bytes, str]]:
    path = FRAMEWORKS / fixture / f"collector-{signal}.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    return [(line.encode(), "application/json") for line in lines if line]


@cache
def traces(fixture: str) -> list[tuple[list[ExtractedCall], list[ToolDefinition]]]:
    """Each trace of the capture extracted on its own, in start order (LangGraph with OpenLLMetry
    writes `create_agent` as a trace of its own; MCP a stray `notifications/initialized` one)."""
    from traceladder.decode import decode_traces

    spans, logs = decode(_bodies(fixture, "traces"), _bodies(fixture, "logs"))
    trace_of: dict[str, str] = {}
    for body, ct in _bodies(fixture, "traces"):
        for row in decode_traces(body, ct).table.select(["trace_id", "span_id"]).to_pylist():
            trace_of[row["span_id"]] = row["trace_id"]
    by_trace: dict[str, list] = {}
    for span in spans:
        by_trace.setdefault(trace_of[span.span_id], []).append(span)
    start = {t: min(s.start_ns for s in found) for t, found in by_trace.items()}
    out = []
    for trace in sorted(by_trace, key=lambda t: start[t]):
        found = extract_trace(
            by_trace[trace], [r for r in logs if r.span_id in {s.span_id for s in by_trace[trace]}]
        )
        out.append((found.calls, found.definitions))
    return out


def calls_of(fixture: str) -> list[ExtractedCall]:
    return [c for calls, _ in traces(fixture) for c in calls]


def sent(fixture: str) -> list[tuple[str, str | None, str]]:
    """(tool, call id, argument text) as the server sent them, with the documented losses."""
    producer, scenario = fixture.split("/")
    loss = LOSSES.get((producer, scenario))
    no_ids = (producer, scenario.rsplit("-", 1)[1]) in NO_IDS
    out = []
    for call in expected(fixture)["sent_calls"]:
        arguments = call["arguments_raw"]
        if loss is not None and call["id"] == loss[0]:
            if loss[1] is None:
                continue
            arguments = loss[1]
        if producer in NO_ARGUMENTS:
            arguments = None
        out.append((call["name"], None if no_ids else call["id"], arguments))
    return out


@pytest.mark.parametrize("fixture", FIXTURES)
def test_every_call_the_model_sent_is_read_once_with_its_id_and_arguments(fixture):
    got = [(c.tool_name, c.call_id, c.arguments_raw) for c in calls_of(fixture)]
    assert got == sent(fixture)


def wire_tools(fixture: str) -> list[dict[str, Any]]:
    """The tools the framework sent, one definition each: OpenAI's `{type, function}` and
    Anthropic's flat ones as they are, Gemini's `functionDeclarations` unpacked (google-genai sends
    the schema as `parameters_json_schema`: given here as `parameters`)."""
    out = []
    for tool in expected(fixture)["request_tools"] or []:
        declarations = tool.get("functionDeclarations", tool.get("function_declarations"))
        if not isinstance(declarations, list):
            out.append(tool)
            continue
        for d in declarations:
            schema = d.get("parameters", d.get("parameters_json_schema", d.get("parametersJsonSchema")))
            out.append({"name": d["name"], "description": d.get("description"), "parameters": schema})
    return out


@pytest.mark.parametrize("fixture", FIXTURES)
def test_definitions_are_the_schemas_the_framework_sent(fixture):
    on_wire = {}
    for tool in wire_tools(fixture):
        function = tool.get("function", tool.get("toolSpec", tool))
        # OpenAI's `parameters`; Anthropic's `input_schema`; Bedrock Converse's `inputSchema.json`
        on_wire[function["name"]] = function.get(
            "parameters", function.get("input_schema", (function.get("inputSchema") or {}).get("json"))
        )
    for _, definitions in traces(fixture):
        for d in definitions:
            assert d.name in on_wire, f"{d.name} was never offered"
            if d.parameters is not None:
                assert json.loads(d.parameters) == _comparable(on_wire[d.name], json.loads(d.parameters))


def _comparable(wire: Any, recorded: Any) -> Any:
    """The schema on the wire, keyed as the producer recorded it: some producers record the
    function's own schema without the `strict`-mode additions the framework put on the wire."""
    if isinstance(wire, dict) and isinstance(recorded, dict):
        return {k: _comparable(wire.get(k), recorded[k]) for k in recorded if k in wire} | {
            k: recorded[k] for k in recorded if k not in wire
        }
    return wire


def test_definitions_are_read_wherever_the_producer_recorded_them():
    missing = []
    for fixture in FIXTURES:
        names = {d.name for _, defs in traces(fixture) for d in defs if d.parameters is not None}
        ran = {c.tool_name for c in calls_of(fixture)}
        if not ran <= names and not fixture.startswith(
            (
                "openai-agents-otel",
                "responses-otel",
                "anthropic-sdk",
                "google-adk",
                "bedrock-botocore",
                "autogen",
                "llamaindex-openllmetry",
            )
        ):
            missing.append((fixture, sorted(ran - names)))
    # the OTel Agents instrumentation (either model), the anthropic SDK, ADK, the botocore
    # instrumentation, AutoGen and LlamaIndex's OpenLLMetry record no schema (docs/conventions.md)
    assert missing == []


def sql(db: Path, query: str) -> list[dict[str, Any]]:
    result = cli_in_process("sql", query, "--db", str(db), "--json")  # reads rows back: set-up
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("producer", PRODUCERS)
def test_a_bad_call_is_never_a_pass_and_a_clean_chain_never_fails_rung_1(tmp_path, producer):
    db = tmp_path / "s.duckdb"
    dirs = [FRAMEWORKS / f for f in FIXTURES if f.startswith(producer + "/")]
    files = sorted(str(p) for d in dirs for p in d.glob("collector-*.jsonl"))
    assert (
        cli_in_process("ingest", "--db", str(db), "--processes", "1", *files).returncode == 0
    )  # set-up in one process: decision 801
    policy = tmp_path / "policy.toml"
    policy.write_text("[defaults]\nforbid_duplicate_calls = true\n")
    # what a user gives for a producer that records no tool definitions (the OTel Agents
    # instrumentation): the tools the framework sent; traces that captured their own keep those
    tools = tmp_path / "tools.json"
    first = next(f for f in FIXTURES if f.startswith(producer + "/"))
    tools.write_text(
        json.dumps(
            [
                t if "function" in t or "toolSpec" in t else {"type": "function", "function": t}
                for t in wire_tools(first)
            ]
        )
    )
    result = cli("evaluate", "--db", str(db), "--policy", str(policy), "--tools", str(tools))
    assert result.returncode == 0, result.stderr
    # one call read twice would be a DUPLICATE_CALL; the only real ones are LangChain's and the
    # anthropic SDK's streamed repairs, which turn the broken call into a copy of the next (LOSSES)
    duplicates = sql(db, "SELECT count(*) AS n FROM findings WHERE code = 'DUPLICATE_CALL'")
    repaired = sum(
        1
        for key, loss in LOSSES.items()
        if key[0] == producer and loss[2] in (REPAIRED, PARTIAL, LLAMA_REPAIRED)
    )
    assert duplicates == [{"n": repaired}]
    rows = sql(db, "SELECT trace_id, verdict, settled_at FROM results")
    verdicts = {r["trace_id"]: r for r in rows}
    calls = sql(db, "SELECT trace_id, call_id, arguments_raw FROM tool_calls")
    by_call = {(c["call_id"], c["arguments_raw"]): c["trace_id"] for c in calls}
    for fixture in (f for f in FIXTURES if f.startswith(producer + "/")):
        scenario = fixture.split("/")[1].rsplit("-", 1)[0]
        for tool, call_id, arguments in sent(fixture):
            trace = by_call.get((call_id, arguments))
            if (
                trace is None
                or scenario not in ("invalid_json", "schema_violation")
                or not _bad(tool, arguments)
            ):
                continue
            assert verdicts[trace]["verdict"] != "PASS", (fixture, tool, arguments)
        if scenario == "chain":
            for _, call_id, arguments in sent(fixture):
                trace = by_call[(call_id, arguments)]
                assert verdicts[trace]["settled_at"] != 1 or verdicts[trace]["verdict"] != "FAIL", fixture


def _bad(tool: str, arguments: str | None) -> bool:
    """Whether the scripted call can never run: not a JSON object, or against its schema (None:
    the producer never recorded the arguments, so nothing says they were bad)."""
    if arguments is None:
        return False
    try:
        value = json.loads(arguments)
    except ValueError:
        return True
    if not isinstance(value, dict):
        return True
    return tool == "book_table" and not isinstance(value.get("party_size"), int) or value == {}


@pytest.mark.parametrize("fixture", ["pydantic-ai/invalid_json-plain", "langgraph-openllmetry/chain-plain"])
def test_without_the_responses_a_tool_span_gives_the_arguments_never_its_envelope(fixture):
    """The chat spans dropped (sampling, a lost batch): the calls come from the tool spans alone,
    and what they carry is unwrapped — pydantic-ai's {"INVALID_JSON": text}, LangChain's callback
    payload — to the arguments the model sent."""
    spans, logs = decode(_bodies(fixture, "traces"), _bodies(fixture, "logs"))
    tools_only = [s for s in spans if s.attributes.get("gen_ai.operation.name") != "chat"]
    calls = extract_trace(tools_only, logs).calls
    want = {(name, arguments) for name, _, arguments in sent(fixture)}
    got = {(c.tool_name, c.arguments_raw) for c in calls if c.origin == "tool_span"}
    canonical = {
        (n, json.dumps(json.loads(a), sort_keys=True)) if _bad(n, a) is False else (n, a) for n, a in want
    }
    assert {
        (n, json.dumps(json.loads(a), sort_keys=True)) if _bad(n, a) is False else (n, a) for n, a in got
    } == canonical
