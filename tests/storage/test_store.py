"""The DuckDB store: pinned blank schema, idempotent bulk writes, tool-call derivation, locking."""

from __future__ import annotations

import re
import subprocess
import sys
import time

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.conftest import ROOT, cli
from traceladder.errors import UserError
from traceladder.store import DuckDBSpanExporter, Store


def documented_schema() -> dict[str, list[tuple[str, str]]]:
    """Every table and view docs/data-model.md describes: its columns in order, with types."""
    doc = (ROOT / "docs" / "data-model.md").read_text(encoding="utf-8")
    found: dict[str, list[tuple[str, str]]] = {}
    current = None
    for line in doc.splitlines():
        heading = re.match(r"^### `(\w+)`", line)
        if heading:
            current = found.setdefault(heading.group(1), [])
            continue
        row = re.match(r"^\| `(\w+)` \| ([A-Z][A-Z0-9_(), ]*) \|", line)
        if row and current is not None:
            current.append((row.group(1), row.group(2).strip()))
    return found


def actual_schema(store) -> dict[str, list[tuple[str, str]]]:
    rows = store.fetchall(
        "SELECT table_name, column_name, data_type FROM information_schema.columns "
        "WHERE table_schema = 'main' ORDER BY table_name, ordinal_position"
    )
    out: dict[str, list[tuple[str, str]]] = {}
    for table, column, kind in rows:
        out.setdefault(table, []).append((column, kind))
    return out


def test_the_blank_schema_is_the_documented_one(tmp_path):
    """docs/data-model.md pins every table and view, every column in order, with its type."""
    with Store(tmp_path / "blank.duckdb") as store:
        actual = actual_schema(store)
        applied = store.applied_migrations()
    documented = documented_schema()
    assert set(documented) == set(actual), "tables/views differ from docs/data-model.md"
    for name, columns in actual.items():
        assert documented[name] == columns, f"docs/data-model.md is wrong about {name}"
    assert applied[0] == "001_spans_runs" and applied[-1] == "015_result_notes"
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
         f"import time; from traceladder.store import Store; s = Store({str(db)!r}); print('ready', flush=True); time.sleep(60)"],
        cwd=ROOT, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        started = time.monotonic()
        result = cli(
            "run",
            "--model",
            "sim:oracle",
            "--db",
            str(db),
            "--no-report",
            env={"TRACELADDER_LOCK_TIMEOUT": "1"},
        )
        assert result.returncode == 2
        assert time.monotonic() - started >= 1  # it waited for its turn first
        assert result.stderr.count("\n") == 1, result.stderr
        assert f"is in use by process {holder.pid}" in result.stderr and "Traceback" not in result.stderr
        assert "waited 1s (TRACELADDER_LOCK_TIMEOUT)" in result.stderr
        with pytest.raises(UserError, match="in use by"):
            Store(db, read_only=True, lock_timeout=0)
    finally:
        holder.kill()
        holder.communicate()


def test_a_command_waits_for_a_store_held_briefly(tmp_path):
    db = tmp_path / "briefly.duckdb"
    holder = subprocess.Popen(
        [sys.executable, "-c",
         f"import time; from traceladder.store import Store; s = Store({str(db)!r}); print('ready', flush=True); time.sleep(2); s.close(); time.sleep(30)"],
        cwd=ROOT, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        result = cli("sql", "--db", str(db), "SELECT count(*) FROM spans", "--csv")
        assert result.returncode == 0, result.stderr
        assert result.stdout.splitlines() == ["count_star()", "0"]
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
    from traceladder.produce.agent.client import choose_model
    from traceladder.produce.agent.config import AgentConfig
    from traceladder.produce.agent.runner import RunOptions, run_suite

    db = tmp_path / "live.duckdb"
    seen = []

    def peek(end):
        with Store(db) as other:  # a second handle in the same process, mid-run
            seen.append(other.fetchall("SELECT status FROM runs")[0][0])

    with Store(db) as store:
        choice = choose_model("sim:oracle", None)
        run_suite(store, choice, AgentConfig(model=choice.model), RunOptions(case_ids=("fc-d1-001", "fc-d1-004")),
                  domain=retail, progress=peek)  # fmt: skip
        assert store.fetchall("SELECT status FROM runs") == [("complete",)]
    assert seen == ["running", "running"]


def test_results_of_an_older_store_are_carried_into_long_form(tmp_path):
    """A store written before migration 004 (wide `results` table) keeps every result: the new
    `results` view reads back exactly what the old table held."""
    import duckdb

    from traceladder.store.migrations import MIGRATIONS

    db = tmp_path / "old.duckdb"
    wide = [
        ("run-1", "fc-d1-001", 0, "a" * 32, "D1", "PASS", None, 4, "pass", 1.0, "pass", 1.0, 1.0, "pass", 1.0, 1.0,
         1.0, 1.0, "pass", 1.0, 1.0, "all 1 golden call(s) matched", "{}", "1.1.0"),
        ("run-1", "fc-d1-002", 0, "b" * 32, "D1", "FAIL", "PARAM_WRONG_VALUE", 2, "pass", 1.0, "fail", 0.0, 0.0,
         "pass", 1.0, 1.0, 1.0, 1.0, "fail", 0.5, 0.5, "FAIL at rung 2", "{}", "1.1.0"),
        ("run-1", "fc-d1-003", 0, "c" * 32, "D1", "AGENT_ERROR", None, None, None, None, None, None, None, None,
         None, None, None, None, None, None, None, "agent error: timeout", "{}", "1.1.0"),
    ]  # fmt: skip
    with duckdb.connect(str(db)) as conn:
        conn.execute("CREATE TABLE schema_migrations (name VARCHAR PRIMARY KEY, applied_at TIMESTAMP)")
        for name, sql in MIGRATIONS[:3]:
            conn.execute(sql)
            conn.execute("INSERT INTO schema_migrations VALUES (?, now())", [name])
        conn.executemany(f"INSERT INTO results VALUES ({', '.join('?' * 24)}, now())", wide)
        conn.execute("INSERT INTO findings VALUES ('run-1', 'fc-d1-002', 0, ?, 2, 'PARAM_WRONG_VALUE', 'get_order', "
                     "'order_id', '\"W441\"', '\"W442\"', 'm', 1, '1.1.0')", ["b" * 32])  # fmt: skip
    with Store(db) as store:
        assert store.applied_migrations()[-12:] == [
            "004_long_form_results",
            "005_otlp_sources",
            "006_live_traces",
            "007_trend_views",
            "008_judge",
            "009_one_pass_rate",
            "010_tool_definition_origin",
            "011_extraction_stamp",
            "012_trace_reading",
            "013_conversations",
            "014_case_turns",
            "015_result_notes",
        ]
        back = store.fetchall(
            "SELECT * EXCLUDE (evaluated_at, settled_by, domain) FROM results ORDER BY case_id"
        )
        assert [row[:24] for row in back] == [tuple(row) for row in wide]
        assert store.fetchall("SELECT settled_by FROM trace_results ORDER BY case_id") == [
            ("partial_credit",),
            ("call_match",),
            (None,),
        ]
        assert store.fetchall("SELECT rung_name, code FROM failures") == [("call_match", "PARAM_WRONG_VALUE")]
        assert store.fetchall("SELECT count(*) FROM rung_results WHERE trace_id = ?", ["c" * 32]) == [(0,)]


def test_no_store_connection_draws_a_progress_bar(tmp_path):
    """DuckDB draws a progress bar on a slow query; it landed in output that callers parse (a
    child's stdout under load). Every connection a store opens, writing or read-only, has it off."""
    db = tmp_path / "s.duckdb"
    with Store(db) as store:
        assert store.fetchall("SELECT current_setting('enable_progress_bar')") == [(False,)]
    with Store(db, read_only=True) as store:
        assert store.fetchall("SELECT current_setting('enable_progress_bar')") == [(False,)]


def test_a_memory_cap_restores_exactly_what_was_there_however_often_it_is_set(tmp_path):
    """DuckDB prints its limit rounded down (`18.8 GiB`); restoring from that text lost 0.1 GiB a
    time, so a long `watch` or a streamed report shrank the store's memory batch by batch. The
    default comes back by RESET, an outer cap as it was asked for, and so do the threads."""
    from traceladder.store.run_report import capped

    def settings(store):
        return store.fetchall("SELECT current_setting('memory_limit'), current_setting('threads')")[0]

    with Store(tmp_path / "s.duckdb") as store:
        default = settings(store)
        for _ in range(5):
            with store.memory_limit("256MB", threads=1):
                capped_inside = settings(store)
                for _ in range(5):
                    assert capped(store, lambda: settings(store))[0] != capped_inside[0]
                    assert settings(store) == capped_inside
            assert capped(store, lambda: 1) == 1
        assert settings(store) == default


def test_a_kept_memory_cap_holds_for_the_store_and_caps_inside_come_back_to_it(tmp_path):
    """A report caps DuckDB for the rest of its store's life (`keep_memory_limit`): the caps a
    batch or a partition sets inside come back to it, a cap of the memory alone leaves the threads
    as they were, and nothing restores DuckDB's defaults before the store closes."""
    from traceladder.store.run_report import capped

    def settings(store):
        return store.fetchall("SELECT current_setting('memory_limit'), current_setting('threads')")[0]

    with Store(tmp_path / "s.duckdb") as store:
        default = settings(store)
        store.keep_memory_limit("256MB", threads=1)
        kept = settings(store)
        assert kept != default and kept[1] == 1
        for _ in range(3):
            assert capped(store, lambda: settings(store)) != kept
            assert settings(store) == kept
            with store.memory_limit("128MB"):
                assert settings(store)[1] == 1  # the threads as the kept cap set them
            assert settings(store) == kept
