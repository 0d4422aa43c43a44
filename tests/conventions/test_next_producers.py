"""Units of the readers added for the producers of issue 32 (their fixtures are tested call by
call in test_frameworks.py / test_producers_next.py): what they refuse to read."""

from __future__ import annotations

import json

import pytest

from traceladder.extract.conventions.frameworks.openai_responses import constructor_repr


def test_a_pydantic_repr_is_read_as_literals_and_nothing_in_it_runs(tmp_path):
    marker = tmp_path / "ran"
    text = (
        f"ResponseFunctionToolCall(arguments='{{}}', call_id='call_1', name='x', "
        f"status=open({str(marker)!r}, 'w').write('1'), caller=None)"
    )
    assert constructor_repr(text) == (
        "ResponseFunctionToolCall",
        {"arguments": "{}", "call_id": "call_1", "name": "x", "caller": None},
    )
    assert not marker.exists()


def test_what_is_not_a_constructor_repr_is_nothing():
    for text in ["{'a': 1}", "lower(a=1)", "Foo(a=1", "Foo.bar(a=1)", 42, None, "X(" + "a" * 10]:
        assert constructor_repr(text) is None, text
    assert constructor_repr("Foo(1, a=2)") == ("Foo", {"a": 2})  # positional values are dropped


def test_a_tools_file_in_anthropic_format_gives_its_input_schema(tmp_path):
    """`--tools` with Anthropic's definitions (what `anthropic-*` requests send): the schema is
    `input_schema`; read as no schema, every call would pass rung 1."""
    from traceladder.evaluate.trace_schemas import load_tools_file

    schema = {"type": "object", "properties": {"party_size": {"type": "integer"}}, "required": ["party_size"]}
    path = tmp_path / "tools.json"
    path.write_text(json.dumps([{"name": "book_table", "description": "Book.", "input_schema": schema}]))
    assert load_tools_file(path).schemas["book_table"] == schema


def test_litellm_raw_choices_are_read_as_literals_only(tmp_path):
    from traceladder.extract.conventions.frameworks.litellm import raw_choice_calls

    marker = tmp_path / "ran"
    call = "{'id': 'call_1', 'function': {'arguments': '{}', 'name': 'x'}, 'type': 'function'}"
    good = f"[{{'message': {{'role': 'assistant', 'tool_calls': [{call}]}}}}]"
    assert [(s.name, s.call_id, s.args) for s in raw_choice_calls({"llm.openai.choices": good})] == [
        ("x", "call_1", "{}")
    ]
    evil = f"[{{'message': {{'tool_calls': [{call}], 'x': open({str(marker)!r}, 'w').write('1')}}}}]"
    assert raw_choice_calls({"llm.openai.choices": evil}) == []
    assert not marker.exists()


# What `experimental_telemetry: {recordInputs: false, recordOutputs: false}` keeps the AI SDK from
# writing (its `selectTelemetryAttributes` drops every input / output attribute).
_VERCEL_CONTENT = ("ai.prompt", "ai.toolCall.args", "ai.toolCall.result", "ai.response.")


def test_vercel_ai_without_recorded_content_reads_its_calls_by_id_and_never_judges_absent_arguments(tmp_path):
    """The real Vercel AI SDK capture with the content attributes the SDK's record switches drop:
    the calls still come, by name and id, from the `ai.toolCall` spans; rung 1 is not_evaluated
    for arguments that were never recorded, never PARAM_WRONG_FORMAT, and the trace is no PASS."""
    from pathlib import Path

    from tests.conftest import cli, cli_in_process

    capture = Path(__file__).resolve().parents[1] / "fixtures/frameworks/vercel-ai/chain-plain"
    request = json.loads((capture / "collector-traces.jsonl").read_text().splitlines()[0])
    for resource in request["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                span["attributes"] = [
                    a for a in span["attributes"] if not a["key"].startswith(_VERCEL_CONTENT)
                ]
    stripped = tmp_path / "collector-traces.jsonl"
    stripped.write_text(json.dumps(request) + "\n")
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(json.loads((capture / "expected.json").read_text())["request_tools"]))
    db = tmp_path / "s.duckdb"
    assert cli_in_process("ingest", "--db", str(db), str(stripped)).returncode == 0  # set-up
    assert cli("evaluate", "--db", str(db), "--tools", str(tools)).returncode == 0

    def sql(query: str) -> list[dict]:
        done = cli_in_process("sql", query, "--db", str(db), "--json")  # reads rows back: set-up
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    assert sql("SELECT tool_name, call_id, arguments_raw FROM tool_calls ORDER BY ordinal") == [
        {"tool_name": "get_weather", "call_id": "call_d1", "arguments_raw": None},
        {"tool_name": "get_time", "call_id": "call_d2", "arguments_raw": None},
        {"tool_name": "book_table", "call_id": "call_d3", "arguments_raw": None},
    ]
    assert sql("SELECT count(*) AS n FROM findings WHERE code = 'PARAM_WRONG_FORMAT'") == [{"n": 0}]
    (rung,) = sql("SELECT status, explanation FROM rung_results WHERE rung_name = 'schema'")
    assert rung["status"] == "not_evaluated"
    assert "the producer recorded no arguments for it" in rung["explanation"]
    assert sql("SELECT verdict FROM results") != [{"verdict": "PASS"}]


def test_a_tools_file_in_bedrock_converse_format_gives_its_input_schema_json(tmp_path):
    """`--tools` with a Bedrock `toolConfig` (what boto3's converse takes; the botocore
    instrumentation records no definitions, so this is how a user supplies them)."""
    from traceladder.evaluate.trace_schemas import load_tools_file

    schema = {"type": "object", "properties": {"party_size": {"type": "integer"}}, "required": ["party_size"]}
    path = tmp_path / "tools.json"
    spec = {"toolSpec": {"name": "book_table", "description": "Book.", "inputSchema": {"json": schema}}}
    path.write_text(json.dumps({"tools": [spec]}))
    assert load_tools_file(path).schemas["book_table"] == schema


def test_a_tools_file_with_gemini_declarations_gives_their_schemas(tmp_path):
    """`--tools` with Gemini's tools: what the google-genai SDK sent to the scripted server in the
    captured Google GenAI run (`functionDeclarations` with `parameters_json_schema`), taken as it
    is, and the REST API's own `parameters` (upper-case OpenAPI types, `nullable`) as the JSON
    Schema it means. Read as no schema, every call would pass rung 1."""
    from pathlib import Path

    from traceladder.evaluate.trace_schemas import load_tools_file

    capture = Path(__file__).resolve().parents[1] / "fixtures/frameworks/google-genai/chain-plain"
    sent = json.loads((capture / "model-requests.json").read_text())[0]
    path = tmp_path / "gemini.json"
    path.write_text(json.dumps({"tools": sent["tools"]}))
    registry = load_tools_file(path)
    declared = {d["name"]: d["parameters_json_schema"] for d in sent["tools"][0]["functionDeclarations"]}
    assert registry.schemas == declared and len(declared) == 3

    rest = {"name": "book_table", "parameters": {
        "type": "OBJECT", "required": ["party_size"],
        "properties": {"party_size": {"type": "INTEGER"}, "note": {"type": "STRING", "nullable": True},
                       "nullable": {"type": "BOOLEAN"}, "tags": {"type": "ARRAY", "items": {"type": "STRING"}}},
    }}  # fmt: skip
    path.write_text(json.dumps([{"function_declarations": [rest]}]))
    schema = load_tools_file(path).schemas["book_table"]
    assert schema == {"type": "object", "required": ["party_size"], "properties": {
        "party_size": {"type": "integer"}, "note": {"type": ["string", "null"]},
        "nullable": {"type": "boolean"}, "tags": {"type": "array", "items": {"type": "string"}},
    }}  # fmt: skip


def test_a_tools_file_with_a_nameless_gemini_declaration_is_one_clear_error(tmp_path):
    from traceladder.errors import UserError
    from traceladder.evaluate.trace_schemas import load_tools_file

    path = tmp_path / "gemini.json"
    for document, says in [
        ([{"functionDeclarations": [{"parameters": {"type": "OBJECT"}}]}], "declaration without a name"),
        ([{"functionDeclarations": {"name": "x"}}], "functionDeclarations is not a list"),
    ]:
        path.write_text(json.dumps(document))
        with pytest.raises(UserError, match=says):
            load_tools_file(path)


def test_llamaindex_step_outputs_that_are_not_a_model_response_give_no_calls():
    """Only a `BaseWorkflowAgent.task` step whose output is JSON `{"response": …tool_calls…}` is a
    response; anything else (broken JSON, a Python repr, another step) gives nothing, never raises."""
    from traceladder.extract.conventions.frameworks.llamaindex import CONVENTION, response_calls
    from traceladder.extract.conventions.views import SpanView

    call = '{"id": "call_1", "function": {"name": "x", "arguments": "{\\"a\\": 1"}}'
    good = f'{{"response": {{"role": "assistant", "additional_kwargs": {{"tool_calls": [{call}]}}}}}}'
    assert [(s.name, s.call_id, s.args) for s in response_calls({"traceloop.entity.output": good})] == [
        ("x", "call_1", '{"a": 1')
    ]
    for output in [
        good[:-5],
        "{'response': {'tool_calls': []}}",
        '{"response": null, "tool_calls": 1}',
        7,
        None,
    ]:
        assert response_calls({"traceloop.entity.output": output}) == []
    attrs = {
        "traceloop.span.kind": "task",
        "traceloop.entity.name": "Other.task",
        "traceloop.entity.output": good,
    }
    span = SpanView("s1", None, "Other.task", "INTERNAL", 0, 1, "UNSET", None, attrs, [], "x")
    assert CONVENTION.role(span) is None
