"""What comes from a trace or a folder is data, never an action: every command that compiles a tool
schema someone else wrote (`cases from-traces`, `domain validate`, `cases validate`, `run --domain`,
`evaluate --domain`, `evaluate --tools`) refuses a `$ref` to a URL without opening a socket, and
finishes a catastrophic pattern (`^(a+)+$` against forty a's and a `!`) at once — RE2, never `re`.

A real listening socket on 127.0.0.1 stands for the URL: a command that fetched it would connect.
The subprocess timeout is a hang detector, not a speed claim (with `re`, each input here runs for
hours)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import cli, cli_in_process, rows
from recorded_traces import trace_spans, write_traces

HOSTILE = "^(a+)+$"
EVIL = "a" * 40 + "!"
HANG = 60  # seconds: a hang detector (see the module docstring)


@pytest.fixture
def url() -> Iterator[str]:
    """A URL that a fetch would reach; after the test, proof that nothing connected to it."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/schema.json"
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody called


def one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


def params(**properties) -> dict:
    return {"type": "object", "properties": properties, "required": sorted(properties)}


def tool(schema: dict) -> dict:
    return {
        "type": "function",
        "function": {"name": "lookup", "description": "Look a code up.", "parameters": schema},
    }


def folder(tmp_path: Path, schema: dict, *, code: str = "abc", golden: str = "abc") -> Path:
    """A declarative domain with one tool `lookup(code)`, one recorded call and one case."""
    out = tmp_path / "dom"
    out.mkdir()
    (out / "tools.json").write_text(json.dumps([tool(schema)]))
    (out / "domain.toml").write_text(
        'read_only = ["lookup"]\nwhitelist = []\n[suite]\nid_prefix = "tr"\n'
        '[suite.categories.one]\ndimension = "D2"\nfirst_id = 1\ntools = ["lookup"]\n'
        "order_sensitive = false\nnegative = false\n"
    )
    (out / "responses.jsonl").write_text(
        json.dumps({"tool": "lookup", "arguments": {"code": code}, "result": "{}"}) + "\n"
    )
    case = {"id": "tr-d2-001", "dimension": "D2", "category": "one", "instruction": "Look abc up.",
            "context": {"db_fixture": "recorded", "notes": "one lookup"}, "negative": False, "skip": False,
            "skip_reason": None, "golden": {"calls": [{"tool": "lookup", "params": {"code": golden}}],
                                            "order_sensitive": False}}  # fmt: skip
    (out / "cases.jsonl").write_text(json.dumps(case) + "\n")
    return out


def store(tmp_path: Path, schema: dict | None, argument: str) -> Path:
    """A store holding one trace calling `lookup` with `argument`, its definition captured (or
    none captured when `schema` is None)."""
    definitions = [] if schema is None else [{"type": "function", "name": "lookup", "parameters": schema}]
    call = ("lookup", json.dumps({"code": argument}), "{}", True)
    path = write_traces(tmp_path / "traces.json", [trace_spans(1, "Look it up", [call], tools=definitions)])
    db = tmp_path / "traces.duckdb"
    done = cli_in_process("ingest", str(path), "--db", str(db))  # set-up
    assert done.returncode == 0, done.stderr
    return db


def url_ref(url: str) -> dict:
    return params(code={"allOf": [{"$ref": url}]})


# -- a URL $ref: a finding, never a fetch ---------------------------------------------------------


def test_from_traces_refuses_a_captured_url_ref(tmp_path, url):
    db = store(tmp_path, url_ref(url), "abc")
    done = cli("cases", "from-traces", "--db", str(db), "--out", str(tmp_path / "suite"), timeout=HANG)
    assert done.returncode == 2
    assert f"the definition of lookup cannot be used: $ref {url!r} is not a pointer" in one_line(done.stderr)
    assert not (tmp_path / "suite").exists()


@pytest.mark.parametrize("command", ["domain validate", "cases validate", "run", "evaluate"])
def test_a_domain_folder_with_a_url_ref_is_refused_by_every_command(tmp_path, url, command):
    dom = folder(tmp_path, url_ref(url))
    args = {
        "domain validate": ["domain", "validate", "--domain", str(dom)],
        "cases validate": ["cases", "validate", str(dom / "cases.jsonl"), "--domain", str(dom)],
        "run": ["run", "--domain", str(dom), "--model", "sim:oracle", "--db", str(tmp_path / "r.duckdb")],
        "evaluate": ["evaluate", "--db", str(store(tmp_path, None, "abc")), "--domain", f"dir:{dom}", "--no-judge"],
    }[command]  # fmt: skip
    done = cli(*args, timeout=HANG)
    assert done.returncode == 2, done.stderr
    assert f"$ref {url!r} is not a pointer into the definition itself" in done.stderr.splitlines()[0]
    assert "Traceback" not in done.stderr


def test_evaluate_tools_file_refuses_a_url_ref(tmp_path, url):
    db = store(tmp_path, None, "abc")
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([tool(url_ref(url))]))
    done = cli("evaluate", "--db", str(db), "--tools", str(tools), "--no-judge", timeout=HANG)
    assert done.returncode == 2
    line = one_line(done.stderr)
    assert line.startswith(f"traceladder: --tools {tools}: the definition of lookup cannot be used: $ref"), (
        line
    )


def test_a_ref_to_a_missing_pointer_is_a_clear_error(tmp_path):
    dom = folder(tmp_path, params(code={"$ref": "#/$defs/nowhere"}))
    done = cli("domain", "validate", "--domain", str(dom), timeout=HANG)
    assert done.returncode == 2
    assert "$ref '#/$defs/nowhere' leads nowhere a schema is" in done.stderr.splitlines()[0]
    assert "Traceback" not in done.stderr


# -- a catastrophic pattern: RE2 on every path ----------------------------------------------------


@pytest.mark.parametrize(
    "schema",
    [params(code={"type": "string", "pattern": HOSTILE}),
     {"type": "object", "properties": {"code": {"type": "object", "patternProperties": {HOSTILE: {}},
                                                "additionalProperties": False}}}],
    ids=["pattern", "patternProperties"],
)  # fmt: skip
def test_from_traces_judges_a_captured_hostile_pattern_at_once(tmp_path, schema):
    db = tmp_path / "traces.duckdb"
    argument = EVIL if "pattern" in schema["properties"]["code"] else {EVIL: 1}
    call = ("lookup", json.dumps({"code": argument}), "{}", True)
    definitions = [{"type": "function", "name": "lookup", "parameters": schema}]
    path = write_traces(tmp_path / "traces.json", [trace_spans(1, "Look it up", [call], tools=definitions)])
    assert cli_in_process("ingest", str(path), "--db", str(db)).returncode == 0
    done = cli("cases", "from-traces", "--db", str(db), "--out", str(tmp_path / "suite"), timeout=HANG)
    assert done.returncode == 2
    line = one_line(done.stderr)
    assert "call 1 lookup: its arguments do not fit the definition:" in line, line


def test_domain_validate_judges_a_recorded_call_against_a_hostile_pattern_at_once(tmp_path):
    dom = folder(tmp_path, params(code={"type": "string", "pattern": HOSTILE}), code=EVIL, golden="aaa")
    done = cli("domain", "validate", "--domain", str(dom), timeout=HANG)
    assert done.returncode == 2
    assert done.stderr.splitlines()[0] == (
        f"domain: responses.jsonl:1: lookup arguments.code: {json.dumps(EVIL)} does not match {json.dumps(HOSTILE)}"
    )


def test_run_and_cases_validate_judge_a_golden_call_against_a_hostile_pattern_at_once(tmp_path):
    dom = folder(tmp_path, params(code={"type": "string", "pattern": HOSTILE}), code="aaa", golden=EVIL)
    checked = cli("cases", "validate", str(dom / "cases.jsonl"), "--domain", str(dom), timeout=HANG)
    assert checked.returncode == 2 and "does not match" in checked.stderr, checked.stderr
    ran = cli("run", "--domain", str(dom), "--model", "sim:oracle", "--db", str(tmp_path / "r.duckdb"),
              timeout=HANG)  # fmt: skip
    assert ran.returncode == 2 and "does not match" in one_line(ran.stderr)


def test_evaluate_judges_a_model_argument_against_a_folder_s_hostile_pattern_at_once(tmp_path):
    dom = folder(tmp_path, params(code={"type": "string", "pattern": HOSTILE}), code="aaa", golden="aaa")
    db = store(tmp_path, None, EVIL)
    done = cli("evaluate", "--db", str(db), "--domain", f"dir:{dom}", "--no-judge", timeout=HANG)
    assert done.returncode in (0, 1), done.stderr
    assert rows(db, "SELECT status FROM rung_results WHERE rung_name = 'schema'") == [("fail",)]


def test_a_policy_pattern_runs_on_re2_against_a_trace_s_argument(tmp_path):
    """A policy file is untrusted too: its parameter patterns are matched with RE2, and one RE2
    cannot run (a backreference) is refused in one line."""
    db = store(tmp_path, None, EVIL)
    policy = tmp_path / "policy.toml"
    policy.write_text(f'[defaults.parameters]\n"*.code" = "{HOSTILE}"\n')
    done = cli("evaluate", "--db", str(db), "--policy", str(policy), "--no-judge", timeout=HANG)
    assert done.returncode == 0, done.stderr
    assert rows(db, "SELECT code FROM findings WHERE code = 'PARAM_PATTERN'") == [("PARAM_PATTERN",)]
    policy.write_text('[defaults.parameters]\n"*.code" = "(a)\\\\1"\n')
    refused = cli("evaluate", "--db", str(db), "--policy", str(policy), "--no-judge", timeout=HANG)
    assert refused.returncode == 2
    assert "has a regex RE2 cannot run in linear time" in one_line(refused.stderr)
