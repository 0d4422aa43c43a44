"""`cases from-traces` and declarative domain directories on bad input: one clear line, exit 2,
nothing half-written; and what replay does with calls recorded more than once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import cli, cli_in_process, rows
from recorded_traces import trace_spans, write_traces

GOOD = trace_spans(
    1, "Where is order W1?", [("get_order", '{"order_id": "W1"}', '{"status": "pending"}', True)]
)
POLLING = trace_spans(2, "Is job J7 done?", [
    ("get_status", '{"job_id": "J7"}', '{"state": "running"}', True),
    ("get_status", '{"job_id": "J7"}', '{"state": "done"}', True),
])  # fmt: skip
GREETING = trace_spans(3, "Hello there", [])


def ingest(tmp_path: Path, *traces: list) -> Path:
    db = tmp_path / "traces.duckdb"
    done = cli_in_process(
        "ingest", str(write_traces(tmp_path / "traces.json", list(traces))), "--db", str(db)
    )
    assert done.returncode == 0, done.stderr
    return db


def one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        (trace_spans(9, None, [("get_order", '{"order_id": "W1"}', "{}", True)]), "no user request recorded"),
        (trace_spans(9, "Look up W2", [("get_order", '{"order_id": "W2"', "{}", True)]),
         "call 1 get_order: its arguments are not a JSON object"),
        (trace_spans(9, "  where is ORDER w1?", [("get_order", '{"order_id": "W1"}', "{}", True)]),
         "the same user request as trace 00000000000000000000000000000001"),
        (trace_spans(9, "Cancel W1", [("cancel_order", '{"order_id": "W1"}', "{}", True)]),
         "call 1 uses cancel_order, which no selected trace recorded a definition of"),
        (trace_spans(9, "Look up order 7", [("get_order", '{"order_id": 7}', "{}", True)]),
         "call 1 get_order: its arguments do not fit the definition: 7 is not of type \"string\""),
    ],
    ids=["no-request", "invalid-json", "same-request", "no-definition", "schema-invalid"],
)  # fmt: skip
def test_a_trace_that_cannot_be_a_case_stops_with_one_line_and_writes_nothing(tmp_path, bad, says):
    db = ingest(tmp_path, GOOD, bad)
    out = tmp_path / "suite"
    done = cli("cases", "from-traces", "--db", str(db), "--out", str(out))
    assert done.returncode == 2
    line = one_line(done.stderr)
    assert f"trace {'9'.zfill(32)}: {says}" in line, line
    assert "--skip-bad" in line
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["traces.duckdb", "traces.json"]  # no staging left
    skipped = cli("cases", "from-traces", "--db", str(db), "--out", str(out), "--skip-bad")
    assert skipped.returncode == 0, skipped.stderr
    assert (
        skipped.stderr.strip()
        == f"skipped trace {'9'.zfill(32)}: {line.split(': ', 2)[2].split('; nothing')[0]}"
    )
    cases = [json.loads(x) for x in (out / "cases.jsonl").read_text().splitlines()]
    assert [c["context"]["source_trace"] for c in cases] == ["1".zfill(32)]


def test_a_definition_that_is_not_json_schema_is_one_line(tmp_path):
    tools = [{"type": "function", "name": "get_order", "parameters": {"type": "objekt"}}]
    bad = trace_spans(1, "Where is W1?", [("get_order", '{"order_id": "W1"}', "{}", True)], tools=tools)
    db = ingest(tmp_path, bad)
    done = cli("cases", "from-traces", "--db", str(db), "--out", str(tmp_path / "suite"))
    assert done.returncode == 2
    assert 'the definition of get_order is not valid JSON Schema 2020-12: "objekt" is not valid' in one_line(
        done.stderr
    )
    assert not (tmp_path / "suite").exists()


def test_selection_mistakes_are_one_line(tmp_path):
    db = ingest(tmp_path, GOOD)
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "x").write_text("keep me")
    for args, says in (
        (["--where", "no_such_column = 1"], "--where is not a predicate over the traces table"),
        (["--trace", "f" * 32], f"no trace {'f' * 32}"),
        (["--verdict", "PASS"], "no stored trace matches the selection"),
        (["--prefix", "Bad-Prefix"], "--prefix must be lowercase letters and digits"),
    ):
        done = cli("cases", "from-traces", "--db", str(db), "--out", str(tmp_path / "new"), *args)
        assert done.returncode == 2 and says in one_line(done.stderr), (args, done.stderr)
    done = cli("cases", "from-traces", "--db", str(db), "--out", str(tmp_path / "taken"))
    assert done.returncode == 2 and "already exists" in one_line(done.stderr)
    assert (tmp_path / "taken" / "x").read_text() == "keep me"
    assert not (tmp_path / "new").exists()


def test_filters_select_and_sample_by_trace_id(tmp_path):
    db = ingest(tmp_path, GOOD, POLLING, GREETING)
    picked = cli("cases", "from-traces", "--db", str(db), "--out", str(tmp_path / "a"),
                 "--where", "trace_id <> '00000000000000000000000000000002'", "--service", "shop", "--version", "1.0")  # fmt: skip
    assert picked.returncode == 0, picked.stderr
    assert "recorded 2 cases (D1 1, D2 1), 2 tools, 1 recorded results" in picked.stdout
    sampled = cli("cases", "from-traces", "--db", str(db), "--out", str(tmp_path / "b"), "--sample", "1")
    assert sampled.returncode == 0, sampled.stderr
    (case,) = [json.loads(x) for x in (tmp_path / "b" / "cases.jsonl").read_text().splitlines()]
    assert case["context"]["source_trace"] == "1".zfill(32)  # the lowest low-64-bits id
    none = cli("cases", "from-traces", "--db", str(db), "--out", str(tmp_path / "c"), "--version", "2.0")
    assert none.returncode == 2 and "no stored trace matches" in one_line(none.stderr)


def test_differing_results_for_one_call_are_both_kept_and_replayed_in_order(tmp_path):
    db = ingest(tmp_path, GOOD, POLLING, GREETING)
    out = tmp_path / "suite"
    done = cli_in_process("cases", "from-traces", "--db", str(db), "--out", str(out))
    assert done.returncode == 0, done.stderr
    recorded = [json.loads(x) for x in (out / "responses.jsonl").read_text().splitlines()]
    assert [(r["tool"], r["result"]) for r in recorded] == [
        ("get_order", '{"status": "pending"}'),
        ("get_status", '{"state": "running"}'),
        ("get_status", '{"state": "done"}'),
    ]
    cases = {c["id"]: c for c in map(json.loads, (out / "cases.jsonl").read_text().splitlines())}
    assert {cid: (c["dimension"], c["negative"], len(c["golden"]["calls"])) for cid, c in cases.items()} == {
        "tr-d1-001": ("D1", True, 0), "tr-d2-001": ("D2", False, 1), "tr-d3-001": ("D3", False, 2),
    }  # fmt: skip
    run_db = tmp_path / "run.duckdb"
    ran = cli_in_process(
        "run", "--domain", str(out), "--model", "sim:oracle", "--db", str(run_db), "--no-judge"
    )
    assert ran.returncode == 0, ran.stderr
    assert rows(run_db, "SELECT case_id, verdict FROM case_results ORDER BY 1") == [
        ("tr-d1-001", "PASS"), ("tr-d2-001", "PASS"), ("tr-d3-001", "PASS")]  # fmt: skip
    results = rows(run_db, "SELECT t.result FROM tool_calls t JOIN case_runs c USING (trace_id) "
                           "WHERE c.case_id = 'tr-d3-001' ORDER BY t.ordinal")  # fmt: skip
    assert [r[0] for r in results] == ['{"state": "running"}', '{"state": "done"}']


def _domain(tmp_path: Path) -> Path:
    folder = tmp_path / "dom"
    folder.mkdir()
    tool = {"type": "function", "function": {"name": "get_order", "parameters": {
        "type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}}  # fmt: skip
    (folder / "tools.json").write_text(json.dumps([tool]))
    (folder / "domain.toml").write_text('read_only = ["get_order"]\nwhitelist = ["get_order"]\n')
    (folder / "responses.jsonl").write_text(
        '{"tool": "get_order", "arguments": {"order_id": "W1"}, "result": "{}"}\n'
    )
    return folder


@pytest.mark.parametrize(
    ("name", "content", "says"),
    [
        ("tools.json", None, "tools.json is missing"),
        ("domain.toml", None, "domain.toml is missing"),
        ("tools.json", "[{", "tools.json is not JSON"),
        ("tools.json", json.dumps([{"type": "function", "function": {"name": "get_order", "parameters": {"type": 12}}}]),
         "tools.json[0] get_order: parameters schema is not valid JSON Schema 2020-12: 12 is not valid"),
        ("domain.toml", "read_only = [", "domain.toml is not TOML"),
        ("domain.toml", 'read_only = []\nwhitelistt = []\n', "domain.toml: unknown key 'whitelistt'"),
        ("responses.jsonl", '{"tool": "get_order", "arguments": {}, "result": "{}", "when": 1}\n',
         "responses.jsonl:1: unknown key 'when'"),
        ("responses.jsonl", "{oops\n", "responses.jsonl:1: not valid JSON"),
    ],
    ids=["no-tools", "no-toml", "tools-not-json", "not-json-schema", "toml-malformed", "toml-unknown-key",
         "response-unknown-key", "response-not-json"],
)  # fmt: skip
def test_a_broken_domain_directory_is_one_line_per_problem(tmp_path, name, content, says):
    folder = _domain(tmp_path)
    assert cli_in_process("domain", "validate", "--domain", str(folder)).returncode == 0
    if content is None:
        (folder / name).unlink()
    else:
        (folder / name).write_text(content)
    checked = cli("domain", "validate", "--domain", str(folder))
    assert checked.returncode == 2
    assert checked.stderr.splitlines()[0] == f"domain: {says}" or says in checked.stderr.splitlines()[0]
    assert checked.stderr.splitlines()[-1] == "domain_validation=failed (1 problems)"
    ran = cli("run", "--domain", f"dir:{folder}", "--model", "sim:oracle", "--db", str(tmp_path / "r.duckdb"))
    assert ran.returncode == 2 and says in one_line(ran.stderr)


def test_domain_validate_lists_every_contract_problem(tmp_path):
    folder = _domain(tmp_path)
    (folder / "domain.toml").write_text(
        'read_only = []\nwhitelist = ["get_order"]\nid_fields = ["user_id"]\n'
    )
    (folder / "responses.jsonl").write_text(
        '{"tool": "get_order", "arguments": {"order": 1}, "result": "{}"}\n'
        '{"tool": "get_user", "arguments": {}, "result": "{}"}\n'
    )
    checked = cli("domain", "validate", "--domain", str(folder))
    assert checked.returncode == 2
    assert checked.stderr.splitlines() == [
        "domain: whitelist: 'get_order' is not a read-only tool",
        'domain: responses.jsonl:1: get_order arguments: "order_id" is a required property',
        "domain: responses.jsonl:2: 'get_user' is not a tool in tools.json",
        "domain: id_fields: no recorded call or result holds a 'user_id'",
        "domain_validation=failed (4 problems)",
    ]


def test_evaluate_takes_a_domain_directory_like_a_name(tmp_path):
    db = ingest(tmp_path, GOOD, POLLING)
    out = tmp_path / "suite"
    assert cli_in_process("cases", "from-traces", "--db", str(db), "--out", str(out)).returncode == 0
    bare = trace_spans(7, "Where is W1 now?", [("get_order", '{"order": "W1"}', "{}", True)], tools=[])
    write_traces(tmp_path / "bare.json", [bare])
    assert cli_in_process("ingest", str(tmp_path / "bare.json"), "--db", str(db)).returncode == 0
    judged = cli_in_process("evaluate", "--db", str(db), "--domain", f"dir:{out}", "--no-judge")
    assert judged.returncode == 0, judged.stderr
    # the trace that captured no definitions is judged against the directory's tools.json
    assert rows(
        db, f"SELECT status FROM rung_results WHERE trace_id = '{'7'.zfill(32)}' AND rung_name = 'schema'"
    ) == [("fail",)]


def test_a_call_polled_until_done_is_replayed_result_by_result(tmp_path):
    """pending, pending, done: three recorded results, replayed in that order — the second poll
    gets "pending" again, not "done"; a fourth would get the last one."""
    polled = trace_spans(4, "Wait for job J9", [
        ("get_status", '{"job_id": "J9"}', '{"state": "pending"}', True),
        ("get_status", '{"job_id": "J9"}', '{"state": "pending"}', True),
        ("get_status", '{"job_id": "J9"}', '{"state": "done"}', True),
    ])  # fmt: skip
    db = ingest(tmp_path, polled)
    out = tmp_path / "suite"
    assert cli_in_process("cases", "from-traces", "--db", str(db), "--out", str(out)).returncode == 0
    recorded = [json.loads(x)["result"] for x in (out / "responses.jsonl").read_text().splitlines()]
    assert recorded == ['{"state": "pending"}', '{"state": "pending"}', '{"state": "done"}']
    run_db = tmp_path / "run.duckdb"
    ran = cli_in_process(
        "run", "--domain", str(out), "--model", "sim:oracle", "--db", str(run_db), "--no-judge"
    )
    assert ran.returncode == 0, ran.stderr
    results = rows(run_db, "SELECT result FROM tool_calls ORDER BY ordinal")
    assert [r[0] for r in results] == ['{"state": "pending"}', '{"state": "pending"}', '{"state": "done"}']
