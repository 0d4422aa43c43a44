"""Never PASS what cannot be read (issue 32): a producer no convention knows, through the real CLI.

The spans come from the real OpenTelemetry SDK (tests/toy_producer.py), ingested from the
protobuf request its OTLP encoder wrote. A trace whose tool activity no convention reads, or only
partly reads, is NOT_EVALUATED on every rung with its unread shapes named — even though it holds a
schema-violating and an invalid-JSON call — while a trace of a known shape is still judged.
`traceladder explain` says which convention read which span and what was left unread.
"""

from __future__ import annotations

import json

from tests.conftest import cli, cli_in_process
from tests.toy_producer import tools_file, write


def _sql(db, query):
    result = cli_in_process("sql", query, "--db", str(db), "--json")  # reads rows back: set-up
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_a_trace_in_shapes_nobody_reads_is_not_evaluated_with_the_shapes_named(tmp_path):
    db = tmp_path / "s.duckdb"
    ids = write(tmp_path / "toy.pb", "unknown_like", "vercel_like", "litellm_like", "known_shape")
    assert cli_in_process("ingest", "--db", str(db), str(tmp_path / "toy.pb")).returncode == 0  # set-up
    result = cli("evaluate", "--db", str(db), "--tools", str(tools_file(tmp_path / "tools.json")))
    assert result.returncode == 0, result.stderr
    verdicts = {r["trace_id"]: r for r in _sql(db, "SELECT trace_id, verdict, explanation FROM results")}

    unknown = verdicts[ids["unknown_like"]]
    assert unknown["verdict"] == "NOT_EVALUATED"
    assert (
        "tool activity in a shape traceladder does not read: acme.toolCall (3 spans)"
        in unknown["explanation"]
    )
    assert "acme.response.toolCalls (1 span)" in unknown["explanation"]
    rungs = _sql(db, f"SELECT DISTINCT status FROM rung_results WHERE trace_id = '{ids['unknown_like']}'")
    assert rungs == [{"status": "not_evaluated"}]

    # the same shape under the Vercel AI SDK's own names is read since the vercel_ai convention
    # exists: three calls, the schema-violating and the invalid-JSON one fail rung 1
    assert verdicts[ids["vercel_like"]]["verdict"] == "FAIL"
    assert _sql(db, f"SELECT call_id FROM tool_calls WHERE trace_id = '{ids['vercel_like']}' ORDER BY 1") == [
        {"call_id": "call_a1"},
        {"call_id": "call_a2"},
        {"call_id": "call_a3"},
    ]

    # LiteLLM's old-style function_call is read since the litellm convention exists: both calls are
    # read, and the schema-violating one fails rung 1 (unread, it was NOT_EVALUATED; never PASS)
    litellm = verdicts[ids["litellm_like"]]
    assert litellm["verdict"] == "FAIL"
    assert _sql(
        db, f"SELECT tool_name FROM tool_calls WHERE trace_id = '{ids['litellm_like']}' ORDER BY 1"
    ) == [{"tool_name": "book_table"}, {"tool_name": "get_weather"}]

    # the control: every call read, so it is judged as before
    assert verdicts[ids["known_shape"]]["verdict"] == "PASS"

    # stored, per trace: what each convention claimed and what nobody read
    unread = _sql(
        db,
        "SELECT shape, source, items FROM trace_reading WHERE convention IS NULL "
        f"AND trace_id = '{ids['unknown_like']}' ORDER BY shape",
    )
    assert {"shape": "acme.toolCall", "source": "span", "items": 3} in unread
    claimed = _sql(db, f"SELECT convention, role, items FROM trace_reading WHERE convention IS NOT NULL "
                       f"AND trace_id = '{ids['litellm_like']}' ORDER BY convention, role")  # fmt: skip
    assert {"convention": "otel_genai", "role": "tool", "items": 1} in claimed
    assert _sql(db, f"SELECT unread IS NULL AS read FROM traces WHERE trace_id = '{ids['known_shape']}'") == [
        {"read": True}
    ]


def test_explain_names_the_convention_of_each_span_each_calls_source_and_what_was_left(tmp_path):
    db = tmp_path / "s.duckdb"
    ids = write(tmp_path / "toy.pb", "unknown_like", "litellm_like")
    assert cli_in_process("ingest", "--db", str(db), str(tmp_path / "toy.pb")).returncode == 0  # set-up

    out = cli("explain", ids["unknown_like"], "--db", str(db))
    assert (out.returncode, out.stderr) == (0, "")
    text = out.stdout
    assert "calls (0):\n  none read" in text
    assert "acme.toolCall (3 spans) — span; seen on " in text
    assert "acme.response.toolCalls (1 span) — attribute" in text
    assert "judged: no — every rung is not_evaluated: tool activity in a shape" in text
    assert text.count("— no convention") == 5  # generateText, doGenerate, three acme.toolCall

    out = cli("explain", ids["litellm_like"], "--db", str(db))
    assert out.returncode == 0, out.stderr
    assert "execute_tool get_weather" in out.stdout and "otel_genai: tool" in out.stdout
    assert "#1 get_weather id=call_b1" in out.stdout and "from tool_span (otel_genai)" in out.stdout
    # the litellm convention reads the old-style function_call: nothing is left unread
    assert "book_table" in out.stdout and "unread tool activity:\n  none" in out.stdout


def test_explain_refuses_an_unknown_trace_and_a_missing_store_in_one_line(tmp_path):
    db = tmp_path / "s.duckdb"
    write(tmp_path / "toy.pb", "known_shape")
    assert cli_in_process("ingest", "--db", str(db), str(tmp_path / "toy.pb")).returncode == 0  # set-up
    out = cli("explain", "f" * 32, "--db", str(db))
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "no trace ffff" in out.stderr
    out = cli("explain", "f" * 32, "--db", str(tmp_path / "none.duckdb"))
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "no store at" in out.stderr


def test_arguments_never_recorded_are_not_evaluated_never_a_wrong_format(tmp_path):
    db = tmp_path / "s.duckdb"
    ids = write(tmp_path / "toy.pb", "names_only")
    assert cli_in_process("ingest", "--db", str(db), str(tmp_path / "toy.pb")).returncode == 0  # set-up
    for tools in ((), ("--tools", str(tools_file(tmp_path / "tools.json")))):
        result = cli("evaluate", "--db", str(db), *tools)
        assert result.returncode == 0, result.stderr
        assert _sql(db, "SELECT count(*) AS n FROM findings") == [{"n": 0}]
        (rung,) = _sql(db, f"SELECT status, explanation FROM rung_results WHERE rung_name = 'schema' "
                           f"AND trace_id = '{ids['names_only']}'")  # fmt: skip
        assert rung["status"] == "not_evaluated", (tools, rung)
        if tools:
            assert "get_weather (call 1): the producer recorded no arguments for it" in rung["explanation"]
        assert _sql(db, "SELECT verdict FROM results") != [{"verdict": "PASS"}]


def test_calls_only_inside_python_reprs_are_read_where_literal_and_reported_where_not(tmp_path):
    db = tmp_path / "s.duckdb"
    ids = write(tmp_path / "toy.pb", "repr_only")
    assert cli_in_process("ingest", "--db", str(db), str(tmp_path / "toy.pb")).returncode == 0  # set-up
    assert cli("evaluate", "--db", str(db)).returncode == 0
    (row,) = _sql(db, f"SELECT verdict, explanation FROM results WHERE trace_id = '{ids['repr_only']}'")
    assert row["verdict"] == "NOT_EVALUATED"
    # the literal is parsed and its call found under `tool_calls`; the SDK object's repr is not a
    # literal: what it shows is reported as a loss, by the attribute that holds it
    assert "agent.messages → [].tool_calls (1 span)" in row["explanation"]
    assert "agent.result (Python repr) (1 span)" in row["explanation"]
