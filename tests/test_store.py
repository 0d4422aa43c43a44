"""The DuckDB store: pinned blank schema, idempotent bulk writes, tool-call derivation, locking."""

from __future__ import annotations

import subprocess
import sys

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.conftest import ROOT, cli
from traceladder.errors import UserError
from traceladder.storage import DuckDBSpanExporter, Store

BLANK_SCHEMA = {
    "schema_migrations": ["name", "applied_at"],
    "spans": [
        "trace_id", "span_id", "parent_span_id", "name", "kind", "start_ns", "end_ns", "status_code",
        "status_message", "attributes", "events", "resource", "scope_name", "scope_version", "source",
        "operation", "tool_name", "tool_call_id", "tool_arguments", "tool_result", "error_type", "convention",
    ],
    "tool_calls": [
        "trace_id", "span_id", "ordinal", "tool_name", "call_id", "arguments_raw", "arguments", "result",
        "status", "error_type", "convention", "start_ns", "end_ns",
    ],
    "runs": [
        "run_id", "suite", "domain", "model", "provider", "base_url_host", "config", "input_hashes",
        "selection", "cases_total", "started_at", "finished_at", "status",
    ],
    "case_runs": [
        "run_id", "case_id", "repeat_index", "trace_id", "dimension", "agent_status", "error_type",
        "error_message", "steps", "final_text", "latency_ms", "input_tokens", "output_tokens",
        "expected_label", "finished_at",
    ],
}  # fmt: skip


def schema(store):
    rows = store.fetchall(
        "SELECT table_name, column_name FROM information_schema.columns "
        "WHERE table_schema = 'main' AND table_name NOT LIKE '%view%' ORDER BY table_name, ordinal_position"
    )
    out: dict[str, list[str]] = {}
    for table, column in rows:
        out.setdefault(table, []).append(column)
    return out


def test_blank_schema_is_pinned(tmp_path):
    with Store(tmp_path / "blank.duckdb") as store:
        tables = schema(store)
        for name, columns in BLANK_SCHEMA.items():
            assert tables[name] == columns, name
        applied = store.applied_migrations()
        assert applied[0] == "001_spans_runs"
    with Store(tmp_path / "blank.duckdb") as again:  # re-opening applies nothing twice
        assert again.applied_migrations() == applied


def make_spans():
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("t")
    with tracer.start_as_current_span("invoke_agent a", attributes={"gen_ai.operation.name": "invoke_agent"}):
        for i, raw in enumerate(['{"user_id": "U101"}', '{"user_id": ', "[1, 2]"]):
            attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_user",
                     "gen_ai.tool.call.id": f"c{i}", "gen_ai.tool.call.arguments": raw}  # fmt: skip
            with tracer.start_as_current_span("execute_tool get_user", attributes=attrs):
                pass
    return memory.get_finished_spans()


def test_export_is_idempotent_and_derives_tool_calls(tmp_path):
    spans = make_spans()
    with Store(tmp_path / "s.duckdb") as store:
        exporter = DuckDBSpanExporter(store)
        assert exporter.export(spans) == SpanExportResult.SUCCESS
        assert exporter.export(spans) == SpanExportResult.SUCCESS  # re-sent: nothing changes
        assert store.fetchall("SELECT count(*) FROM spans") == [(4,)]
        rows = store.fetchall(
            "SELECT ordinal, call_id, arguments_raw, arguments FROM tool_calls ORDER BY ordinal"
        )
    assert rows == [
        (1, "c0", '{"user_id": "U101"}', '{"user_id": "U101"}'),
        (2, "c1", '{"user_id": ', None),  # invalid JSON stays raw
        (3, "c2", "[1, 2]", None),  # valid JSON but not an object
    ]


def test_a_trace_split_across_batches_gets_one_ordinal_sequence(tmp_path):
    spans = make_spans()  # tool spans end first; the agent span ends last
    with Store(tmp_path / "s.duckdb") as store:
        exporter = DuckDBSpanExporter(store)
        exporter.export(spans[2:])
        exporter.export(spans[:2])
        rows = store.fetchall("SELECT ordinal, call_id FROM tool_calls ORDER BY ordinal")
    assert rows == [(1, "c0"), (2, "c1"), (3, "c2")]


def test_a_failing_store_write_is_failure_not_an_exception(tmp_path):
    store = Store(tmp_path / "s.duckdb")
    store.close()
    assert DuckDBSpanExporter(store).export(make_spans()) == SpanExportResult.FAILURE


def test_a_store_held_by_another_process_gives_one_clear_line(tmp_path):
    db = tmp_path / "held.duckdb"
    holder = subprocess.Popen(
        [sys.executable, "-c",
         f"import time; from traceladder.storage import Store; s = Store({str(db)!r}); print('ready', flush=True); time.sleep(60)"],
        cwd=ROOT, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        result = cli("run", "--model", "sim:oracle", "--db", str(db), "--no-report")
        assert result.returncode == 2
        assert result.stderr.count("\n") == 1, result.stderr
        assert f"is in use by process {holder.pid}" in result.stderr and "Traceback" not in result.stderr
        with pytest.raises(UserError, match="in use by"):
            Store(db, read_only=True)
    finally:
        holder.kill()
        holder.communicate()


def test_read_only_open_of_a_missing_or_foreign_file(tmp_path):
    with pytest.raises(UserError, match="no store at"):
        Store(tmp_path / "missing.duckdb", read_only=True)
    (tmp_path / "junk.duckdb").write_text("not a database")
    with pytest.raises(UserError, match="cannot open"):
        Store(tmp_path / "junk.duckdb")


def test_opening_the_store_again_in_process_does_not_interrupt_a_live_run(tmp_path, retail):
    from traceladder.agent.client import choose_model
    from traceladder.agent.config import AgentConfig
    from traceladder.agent.runner import RunOptions, run_suite

    db = tmp_path / "live.duckdb"
    seen = []

    def peek(done, total, case_id, status):
        with Store(db) as other:  # a second handle in the same process, mid-run
            seen.append(other.fetchall("SELECT status FROM runs")[0][0])

    with Store(db) as store:
        choice = choose_model("sim:oracle", None)
        run_suite(store, choice, AgentConfig(model=choice.model), RunOptions(case_ids=("fc-d1-001", "fc-d1-004")),
                  domain=retail, progress=peek)  # fmt: skip
        assert store.fetchall("SELECT status FROM runs") == [("complete",)]
    assert seen == ["running", "running"]
