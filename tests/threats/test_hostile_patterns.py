"""A tool definition captured from someone else's trace may carry a regular expression that makes
Python's backtracking `re` run for hours (`^(a+)+$` against a long argument). Its validators match
with RE2 instead, in ECMA-262's meaning: the verdict is right and comes at once, whatever shape the
schema takes (`$schema` in a subschema, a recursive `$ref`); what cannot be checked safely (a
pattern RE2 refuses, a `$ref` out of the schema) makes rung 1 `not_evaluated` with the reason;
jsonschema's messages are kept word for word."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, cli, cli_in_process, rows
from jsonschema import Draft202012Validator
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from traceladder.evaluate.rungs.untrusted_schema import schema_errors, untrusted_validator, unusable

HOSTILE = "^(a+)+$"  # exponential for a backtracking engine on "aaa…a!"
LONG = "a" * 1_000  # 2^1000 paths for `re`; short enough that the message is not cut


def code_schema(pattern: str) -> dict:
    return {
        "type": "object",
        "properties": {"code": {"type": "string", "pattern": pattern}},
        "required": ["code"],
    }


def agent_traces(path: Path, pattern: str | dict, codes: list[str], raw: list[str] | None = None) -> None:
    """One trace per code: a chat turn offering `lookup` (its `code` constrained by `pattern`, or
    the parameters schema given), then the tool span calling it — written as the OTLP protobuf an
    exporter would send. `raw`: the argument texts as sent, instead of `{"code": …}` per code."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "someone-elses-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("their_agent")
    definitions = [
        {
            "type": "function",
            "name": "lookup",
            "parameters": code_schema(pattern) if isinstance(pattern, str) else pattern,
        }
    ]
    for n, code in enumerate(codes):
        with tracer.start_as_current_span(
            "invoke_agent their-agent", attributes={"gen_ai.operation.name": "invoke_agent"}
        ):
            chat = {"gen_ai.operation.name": "chat", "gen_ai.tool.definitions": json.dumps(definitions)}
            with tracer.start_as_current_span("chat their-model", attributes=chat):
                pass
            text = raw[n] if raw else json.dumps({"code": code})
            call = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup",
                    "gen_ai.tool.call.id": f"c{n}", "gen_ai.tool.call.arguments": text}  # fmt: skip
            with tracer.start_as_current_span("execute_tool lookup", attributes=call):
                pass
    path.write_bytes(encode_spans(memory.get_finished_spans()).SerializeToString())


def traceladder(*args: str) -> subprocess.CompletedProcess[str]:
    """The real CLI, a process of its own forked from the worker's pre-imported interpreter
    (tests/forked_cli.py): its exit code and verdicts are the subject, and a hang is killed at the
    timeout, a hang detector, not a speed claim — with `re`, the long argument below would take
    longer than the universe has existed."""
    return cli(*args, timeout=240)


def ingested(db: Path, spans: Path) -> None:
    """Set-up: the spans into a store (ingest runs no pattern; the evaluation is the subject)."""
    assert cli_in_process("ingest", "--db", str(db), str(spans)).returncode == 0


def judged(db: Path) -> dict[str, tuple[str, str]]:
    """argument code → (rung 1 status, rung 1 explanation)."""
    found = rows(
        db,
        "SELECT tc.arguments_raw, r.status, r.explanation FROM rung_results r JOIN tool_calls tc USING (trace_id) "
        "WHERE r.rung_name = 'schema'",
    )
    return {json.loads(raw)["code"]: (status, explanation) for raw, status, explanation in found}


DIALECT = "https://json-schema.org/draft/2020-12/schema"
SHAPES = {
    "plain": code_schema(HOSTILE),
    # jsonschema would hand a subschema with its own $schema, or the root reached again through
    # "$ref": "#", to its stock validator — whose patterns run on `re`
    "subschema_dialect": {**code_schema(HOSTILE), "properties": {"code": {"$schema": DIALECT, "type": "string", "pattern": HOSTILE}}},
    "recursive_ref": {"$schema": DIALECT, **code_schema(HOSTILE), "properties": {
        "code": {"type": "string", "pattern": HOSTILE}, "child": {"$ref": "#"}}},
}  # fmt: skip


@pytest.mark.parametrize("shape", SHAPES, ids=list(SHAPES))
def test_a_hostile_pattern_is_judged_right_and_at_once(tmp_path, shape):
    db, spans = tmp_path / "live.duckdb", tmp_path / "t.pb"
    agent_traces(spans, SHAPES[shape], [LONG + "!", LONG])
    ingested(db, spans)
    done = traceladder("evaluate", "--db", str(db))
    assert done.returncode == 0, done.stderr
    verdicts = judged(db)
    assert verdicts[LONG][0] == "pass"
    assert verdicts[LONG + "!"][0] == "fail"
    findings = rows(db, "SELECT code, param, message FROM findings WHERE rung = 1")
    quoted = json.dumps(LONG + "!"), json.dumps(HOSTILE)
    assert findings == [("PARAM_WRONG_FORMAT", "code", f"lookup: {quoted[0]} does not match {quoted[1]}")]
    if shape == "recursive_ref":  # the same pattern, one level down through the root again
        validator = untrusted_validator(SHAPES[shape])
        assert not validator.is_valid({"code": "a", "child": {"code": LONG + "!"}})


def test_arguments_nested_too_deeply_to_decode_are_judged_not_crashed_on(tmp_path):
    db, spans = tmp_path / "live.duckdb", tmp_path / "t.pb"
    deep = '{"code": ' * 5_000 + '"a"' + "}" * 5_000  # Python's json gives up (RecursionError)
    agent_traces(spans, "^a", ["deep"], raw=[deep])
    ingested(db, spans)
    done = traceladder("evaluate", "--db", str(db))
    assert done.returncode == 0, done.stderr
    ((status, explanation),) = rows(
        db, "SELECT status, explanation FROM rung_results WHERE rung_name = 'schema'"
    )
    assert status == "fail" and "lookup: arguments are not valid JSON" in explanation


def test_an_argument_with_a_lone_surrogate_is_judged_not_crashed_on(tmp_path):
    db, spans = tmp_path / "live.duckdb", tmp_path / "t.pb"
    agent_traces(spans, "^a", ["a\ud800", "\ud800"])  # JSON allows a lone surrogate escape
    ingested(db, spans)
    done = traceladder("evaluate", "--db", str(db))
    assert done.returncode == 0, done.stderr
    assert sorted(status for status, _ in judged(db).values()) == ["fail", "pass"]


@pytest.mark.parametrize("pattern", [r"^(a)\1$", r"^(?=a)a+$"], ids=["backreference", "lookahead"])
def test_a_pattern_re2_cannot_run_leaves_rung_one_not_evaluated_and_says_why(tmp_path, pattern):
    db, spans = tmp_path / "live.duckdb", tmp_path / "t.pb"
    agent_traces(spans, pattern, ["aa"])
    ingested(db, spans)
    done = traceladder("evaluate", "--db", str(db))
    assert done.returncode == 0, done.stderr
    assert "re2" not in done.stderr.lower()  # RE2's own error log stays off our stderr
    ((status, explanation),) = judged(db).values()
    assert status == "not_evaluated"
    assert "the definition of lookup cannot be used: pattern" in explanation
    assert "RE2, the linear-time engine, cannot run" in explanation


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
    {"type": "object", "patternProperties": {}, "additionalProperties": False},
    {
        "$schema": DIALECT,
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/int"}},
        "$defs": {"int": {"type": "integer"}},
    },
]
INSTANCES = ["W123", "W12", "xW123", 5, {}, {"a": 1}, {"a": "1"}, {"b": 2, "c": 3}, {"x_1": "v"}, {"x_1": 2},
             {"z": 1}, {"z": "1", "w": 2}, {"y_q": 0, "q": "no"}, {"s": "abba"}, {"s": "aa"}]  # fmt: skip


@pytest.mark.parametrize("schema", SCHEMAS, ids=range(len(SCHEMAS)))
def test_the_validator_gives_the_verdicts_and_error_places_jsonschema_gives(schema):
    reference, ours = Draft202012Validator(schema), untrusted_validator(schema)
    for instance in INSTANCES:
        want = sorted(list(e.absolute_path) for e in reference.iter_errors(instance))
        got = sorted(list(e.absolute_path) for e in schema_errors(ours, instance))
        assert got == want, instance
        assert ours.is_valid(instance) == reference.is_valid(instance), instance


def test_what_makes_a_captured_schema_unusable():
    assert unusable(code_schema(HOSTILE)) is None  # hostile for `re`, linear for RE2
    assert "cannot run" in (unusable({"patternProperties": {r"(a)\1": {}}}) or "")
    assert "cannot run" in (unusable({"$defs": {"d": {"pattern": "(?<=a)b"}}}) or "")
    assert "invalid repetition size" in (unusable({"pattern": "^.{0,5000}$"}) or "")
    # a property *named* pattern, $ref or $id, and data that looks like a pattern, are not keywords
    named = {
        "properties": {"pattern": {"type": "string"}, "$ref": {}, "$id": {}},
        "enum": [{"pattern": r"(a)\1"}],
    }
    assert unusable(named) is None
    # every pattern runs on the linear engine, unevaluatedProperties' too
    assert unusable({"patternProperties": {"^x": {}}, "unevaluatedProperties": False}) is None
    # a $ref must stay among the schema's own subschemas: not into data, a map of names, a URL
    for ref, data in [("#/default", {"default": {"pattern": r"(a)\1"}}),
                      ("#/examples/0", {"examples": [{"patternProperties": {HOSTILE: {}}, "unevaluatedProperties": False}]}),
                      ("#/properties", {}), ("#/$defs/nope", {}), ("https://example.invalid/x.json", {})]:  # fmt: skip
        reason = unusable({"properties": {"code": {"$ref": ref}}, **data}) or ""
        assert ref in reason and ("leads nowhere" in reason or "not a pointer" in reason), ref
    assert (
        unusable({"properties": {"default": {"type": "string"}, "x": {"$ref": "#/properties/default"}}})
        is None
    )
    assert "$id" in (unusable({"properties": {"x": {"$id": "http://x/y"}}}) or "")


def test_a_schema_that_unfolds_without_bound_is_unusable_and_recursion_through_the_argument_is_not():
    """The validator has no step budget: the schema's own size, its `$ref`s followed, bounds its
    work per argument level instead."""
    chain = {
        f"d{i}": {"anyOf": [{"$ref": f"#/$defs/d{i + 1}"}, {"$ref": f"#/$defs/d{i + 1}"}]} for i in range(20)
    }
    chain["d20"] = {"type": "integer"}
    assert "unfolds to more than 100,000" in (unusable({"$ref": "#/$defs/d0", "$defs": chain}) or "")
    short = {k: v for k, v in chain.items() if int(k[1:]) >= 10}  # 2^10 paths: fine
    assert unusable({"$ref": "#/$defs/d10", "$defs": short}) is None
    in_place = {"$defs": {"a": {"allOf": [{"$ref": "#/$defs/b"}]}, "b": {"not": {"$ref": "#/$defs/a"}}},
                "properties": {"x": {"$ref": "#/$defs/a"}}}  # fmt: skip
    assert unusable(in_place) == "it refers to itself without end"
    tree = {
        "type": "object",
        "properties": {"v": {"type": "integer"}, "kids": {"type": "array", "items": {"$ref": "#"}}},
    }
    assert unusable(tree) is None  # each level of the argument is a level of the tree
    validator = untrusted_validator(tree)
    assert validator.is_valid({"v": 1, "kids": [{"v": 2, "kids": []}]})
    assert [list(e.absolute_path) for e in schema_errors(validator, {"kids": [{"v": "2"}]})] == [
        ["kids", 0, "v"]
    ]


def test_a_lone_surrogate_is_read_as_one_replacement_character_never_a_crash():
    validator = untrusted_validator(
        {"type": "object", "properties": {"code": {"type": "string", "pattern": "^a", "maxLength": 2}}}
    )
    assert validator.is_valid({"code": "a\ud800"})
    assert not validator.is_valid({"code": "\ud800"})
    assert [e.absolute_path for e in schema_errors(validator, {"code": "a\ud800\udfff"})] == [("code",)]
    assert [e.absolute_path for e in schema_errors(validator, {"\ud800": 1, "code": "\ud800"})] == [("code",)]


@pytest.mark.parametrize(
    ("pattern", "matching", "not_matching"),
    [
        (r"^\S+$", ["ab", "é"], ["a\u00a0b", "a\u2028b", "a\vb", "a\ufeffb"]),  # ECMA's white space
        (r"^[\s]$", [" ", "\u3000", "\t"], ["x"]),
        (r"^[\u0020-\u007E]+$", ["hello"], ["hé"]),  # \u escapes, which RE2 spells \x{…}
        (r"^\uD83D\uDE00$", ["\U0001f600"], ["\ud83d"]),  # a surrogate pair is one character
        (r"^a.b$", ["axb", "a\U0001f600b"], ["a\rb", "a\u2028b", "a\nb"]),  # ECMA: . stops at any line end
        (r"^\d+$", ["123"], ["١٢٣", "12\n"]),  # ASCII digits, and $ is the end of the text
        (r"\\u0041", ["\\u0041"], ["A"]),  # an escaped backslash, not an escape
        (r"^\w+$", ["a_1"], ["é", "ab\u0301"]),  # ASCII word characters
        (r"^[\d\w]+$", ["a1"], ["١", "é"]),
        (r"^[^\d]$", ["a", "١"], ["1"]),
        (r"^a\b", ["a", "a é", "aé"], ["ab", "a1"]),  # ECMA's \b: an ASCII word boundary
        (r"^a\B", ["ab"], ["a", "aé"]),
    ],
)
def test_captured_patterns_mean_what_ecma_262_says(pattern, matching, not_matching):
    validator = untrusted_validator({"type": "string", "pattern": pattern})
    assert all(validator.is_valid(text) for text in matching)
    assert not any(validator.is_valid(text) for text in not_matching)


def test_captured_schemas_built_to_hang_crash_or_reach_the_network_get_no_verdict():
    """Each attack ends at once with rung 1 `not_evaluated` (or the definition unusable), never a
    hang, a traceback, a wrong verdict or a request to the URL a `$ref` names."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/schema.json"
        done = subprocess.run(
            [sys.executable, "tests/threats/schema_attacks.py", url],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody called
    assert done.returncode == 0, done.stderr
    got = {name: (status, said) for name, (status, said, _) in json.loads(done.stdout).items()}
    assert got["ref_chain"] == (  # 2^24 paths: refused before any call is checked
        "unusable",
        "the definition of t cannot be used: it unfolds to more than 100,000 subschemas",
    )
    assert got["ref_cycle"] == (
        "unusable",
        "the definition of t cannot be used: it refers to itself without end",
    )
    # what jsonschema could only give up on, the validator judges at once, and right
    assert got["unique_items"] == ("pass", "1/1 calls schema-valid")  # 4,000 distinct items
    assert got["unique_items_twice"][0] == "fail"  # one item twice
    assert got["multiple_of"] == ("pass", "1/1 calls schema-valid")  # 10**400 is a multiple of 0.5
    assert got["regex_format"][0] == "fail"  # not a regular expression
    status, said = got["huge_message"]  # a real failure, its message cut (the value stays in `actual`)
    assert status == "fail" and said.startswith('t: "xxx') and len(said) < 2_100 and "more characters" in said
    for name in ("encoded_ref", "superscript_index"):
        assert got[name][0] == "unusable" and "leads nowhere a schema is" in got[name][1], name
    assert got["url_ref"] == (
        "unusable",
        f"the definition of t cannot be used: $ref {url!r} is not a pointer into the definition itself",
    )


def test_a_plug_in_iterates_errors_as_it_did_on_jsonschema_validators():
    """`Domain.validators` reach plug-ins (the calendar sandbox calls `iter_errors`): the errors
    keep jsonschema's `message` and `absolute_path`."""
    validator = untrusted_validator(code_schema("^a"))
    assert list(validator.iter_errors({"code": "a"})) == []
    (error,) = validator.iter_errors({"code": "b"})
    assert error.absolute_path == ("code",) and error.message == '"b" does not match "^a"'
