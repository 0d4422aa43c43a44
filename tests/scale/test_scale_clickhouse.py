"""ClickHouse `otel_traces` as a span source (issue 15), on embedded chdb through clickhouse-connect
— the same client and SQL a real server gets. The table is created with the Collector exporter's
own DDL (tests/fixtures/clickhouse/otel_traces.sql) and filled with what the exporter would write
for the test store's spans (every attribute value a string). chdb allows one data path per
process, so the path is one per test process (session-scoped), and the module's fixture rebuilds the
database on it each time it is set up: `--dist worksteal` can split this module's tests across
other modules' tests in one worker, and the module fixture then runs again."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa
import pytest
from conftest import ROOT
from scale_helpers import AGENT_SPANS, assert_same_results, counts, trace_shards

from traceladder.errors import UserError
from traceladder.evaluate.executors import InProcess
from traceladder.evaluate.shards import ShardJob, evaluate_source
from traceladder.receive.span_sources.clickhouse import ClickHouseSource, parse_clickhouse
from traceladder.receive.span_sources.otel_traces import OTEL_TRACES_SCHEMA, as_string
from traceladder.receive.span_sources.shard import CLICKHOUSE_SHARD

DDL = ROOT / "tests" / "fixtures" / "clickhouse" / "otel_traces.sql"


@pytest.fixture(scope="module")
def data(scale_data) -> Path:
    return scale_data


@pytest.fixture(scope="session")
def chdb_path(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("chdb")


@pytest.fixture(scope="module")
def source(chdb_path, data) -> ClickHouseSource:
    src = parse_clickhouse(f"chdb://{chdb_path}?database=otel&table=otel_traces")
    src.command("DROP DATABASE IF EXISTS otel SYNC")
    src.command("CREATE DATABASE otel")
    for statement in DDL.read_text().split(";"):
        if statement.strip():
            src.command(statement)
    con = duckdb.connect(str(data / "store.duckdb"), read_only=True)
    spans = con.sql(AGENT_SPANS).to_arrow_table()
    con.close()
    assert src.insert_spans(spans) == counts(data / "store.duckdb")[0]
    return src


def test_judged_from_clickhouse_like_from_the_store(data, source, tmp_path):
    db = tmp_path / "r.duckdb"
    summary, spans = evaluate_source(db, source, InProcess(), ShardJob(source, 3))
    assert (summary.units, spans) == (90, counts(data / "store.duckdb")[0])
    assert_same_results(db, data / "store.duckdb")


def test_every_source_names_the_runs_and_models_the_store_does(data, source):
    """What decides the default judge is read from the spans alike everywhere: the store, its
    Parquet export and ClickHouse name the same simulated run and model, and one run alone."""
    from traceladder.receive.span_sources.parquet import ParquetSource
    from traceladder.receive.span_sources.store import StoreSource

    store = StoreSource(data / "store.duckdb")
    [(run_id, model)] = store.run_models(None)
    assert model is not None and model.startswith("sim:")
    for other in (ParquetSource(data / "export"), source):
        assert other.run_models(None) == [(run_id, model)]
        assert other.run_models(run_id) == [(run_id, model)] and other.run_models("nope") == []


def test_the_exporters_lookup_view_fired_and_values_are_strings(source):
    client = source.client()
    assert client.query("SELECT count() FROM otel.otel_traces_trace_id_ts").result_rows == [(90,)]
    kinds = {r[0] for r in client.query("SELECT DISTINCT SpanKind FROM otel.otel_traces").result_rows}
    assert kinds <= {"Internal", "Client", "Server", "Unspecified"} and "Client" in kinds
    (repeat,) = client.query(
        "SELECT any(SpanAttributes['traceladder.case.repeat']) FROM otel.otel_traces "
        "WHERE mapContains(SpanAttributes, 'traceladder.case.repeat')"
    ).result_rows[0]
    assert repeat == "0"  # an int attribute, as the exporter's AsString() writes it


def test_the_shard_sql_agrees_with_python_and_duckdb(data, source):
    want = trace_shards(data / "store.duckdb", 7)
    sql = f"SELECT DISTINCT TraceId, {CLICKHOUSE_SHARD} FROM otel.otel_traces"
    got = dict(source.client().query(sql, parameters={"shards": 7}).result_rows)
    assert got == want


def test_legacy_spellings_wrapped_durations_and_span_events(source):
    """Exporters before Aug 2024 wrote SPAN_KIND_*/STATUS_CODE_*; an end before the start wraps
    Duration around; a gen_ai.choice span event (Nested Events) carries the requested call."""
    ts = 1_700_000_000_000_000_000
    message = '{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"get_order","arguments":"{\\"order_id\\": \\"W1\\"}"}}]}'
    row = {
        "Timestamp": ts, "TraceId": "ABCDEF0123456789abcdef0123456789", "SpanId": "00000000000000aa",
        "ParentSpanId": "", "TraceState": "", "SpanName": "chat gpt", "SpanKind": "SPAN_KIND_CLIENT",
        "ServiceName": "legacy", "ResourceAttributes": [("service.name", "legacy")], "ScopeName": "",
        "ScopeVersion": "", "SpanAttributes": [("gen_ai.operation.name", "chat")], "Duration": 2**64 - 5,
        "StatusCode": "STATUS_CODE_ERROR", "StatusMessage": "boom", "Events.Timestamp": [ts + 1],
        "Events.Name": ["gen_ai.choice"],
        "Events.Attributes": [[("index", "0"), ("finish_reason", "tool_calls"), ("message", message)]],
        "Links.TraceId": [], "Links.SpanId": [], "Links.TraceState": [], "Links.Attributes": [],
    }  # fmt: skip
    source.client().insert_arrow(
        "otel_traces", pa.Table.from_pylist([row], OTEL_TRACES_SCHEMA), database="otel"
    )
    try:
        shard = source.read_shard(0, 1)
        (span,) = shard.filter(
            pa.compute.equal(shard["trace_id"], "abcdef0123456789abcdef0123456789")
        ).to_pylist()
        assert (span["kind"], span["status_code"], span["status_message"]) == ("CLIENT", "ERROR", "boom")
        assert (span["start_ns"], span["end_ns"], span["parent_span_id"]) == (ts, ts, None)
        from traceladder.store.db import Store
        from traceladder.store.writes import write_batch

        with Store(Path(":memory:")) as scratch:
            write_batch(scratch, spans=shard)
            calls = scratch.fetchall(
                "SELECT tool_name, arguments_raw FROM tool_calls WHERE trace_id = 'abcdef0123456789abcdef0123456789'"
            )
        assert calls == [("get_order", '{"order_id": "W1"}')]
    finally:
        source.command("DELETE FROM otel.otel_traces WHERE ServiceName = 'legacy'")


def test_a_table_that_is_not_otel_traces_is_one_line(source):
    source.command(
        "CREATE TABLE IF NOT EXISTS otel.other (TraceId String) ENGINE = MergeTree ORDER BY TraceId"
    )
    other = parse_clickhouse(f"chdb://{source.chdb_path}?database=otel&table=other")
    with pytest.raises(UserError, match=r"lacks the columns Timestamp, SpanId, .*not an otel_traces table"):
        other.check()
    with pytest.raises(UserError, match="does not exist"):
        parse_clickhouse(f"chdb://{source.chdb_path}?database=otel&table=nope").check()


def test_the_password_comes_from_the_environment_and_is_never_shown():
    src = parse_clickhouse("clickhouse://reader@ch.example:8443/otel?secure=1",
                           {"TRACELADDER_CLICKHOUSE_PASSWORD": "s3cret"})  # fmt: skip
    assert src.password == "s3cret"
    assert "s3cret" not in repr(src) + src.name
    assert src.name == "clickhouse://reader@ch.example:8443/otel?table=otel_traces&secure=1"


@pytest.mark.parametrize(
    ("value", "text"),
    [(1.5, "1.5"), (1e-7, "1e-7"), (1e21, "1e+21"), (100.0, "100"), (1e16, "10000000000000000"), (True, "true"),
     (3, "3"), (None, ""), ([1, "a"], '[1,"a"]'), ({"b": 1, "a": "<&>"}, '{"a":"\\u003c\\u0026\\u003e","b":1}')],
)  # fmt: skip
def test_values_are_written_as_the_exporters_as_string_does(value, text):
    """pcommon.Value.AsString(): ES6 number formatting, Go's json.Marshal (sorted keys, HTML escapes)."""
    assert as_string(value) == text
