"""The set-based fold gives exactly the Python extraction's rows (issue 24, point 2).

Differential: every captured fixture (tests/fixtures/producers, all framework captures in
tests/fixtures/frameworks) is ingested into a real store, its traces derived once by the Python
extraction alone (the reference) and once with the SQL fold in front of it, and `tool_calls` and
`tool_definitions` must be identical, cell for cell. A fixture the SQL does not settle is still
compared: routing it to Python must not change it either. The agent-shaped workload (OTel GenAI
chat + execute_tool spans, the common case) must be settled by SQL entirely, so the comparison is
never vacuous. The shredder's tool columns are compared with the Python `tool_columns` the same way.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pyarrow as pa
import pytest

from traceladder.conventions.columns import tool_columns
from traceladder.ingest.run import ingest
from traceladder.otlp.decoded import TOOL_COLUMN_NAMES
from traceladder.otlp.shred import shred_traces
from traceladder.storage.db import Store
from traceladder.storage.derive import derive_traces
from traceladder.storage.set_fold import settle

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import otlp_workload  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CAPTURES = sorted(
    str(p.relative_to(FIXTURES))
    for p in FIXTURES.glob("**/*")
    if p.is_dir() and (any(p.glob("collector-*.jsonl")) or any(p.glob("traces-*.pb")))
)


def _otlp_files(directory: Path) -> list[str]:
    return sorted(str(p) for p in directory.iterdir() if p.suffix in (".pb", ".jsonl") and p.is_file())


def _rows(store: Store) -> tuple[list[Any], list[Any]]:
    calls = store.fetchall("SELECT * EXCLUDE (arguments) FROM tool_calls ORDER BY trace_id, ordinal")
    definitions = store.fetchall("SELECT * FROM tool_definitions ORDER BY trace_id, name")
    return calls, definitions


def _both(store: Store) -> tuple[tuple[list[Any], list[Any]], tuple[list[Any], list[Any]], int, int]:
    """(Python rows, SQL-fold rows, traces, traces the SQL settled) for everything stored."""
    ids = pa.array([r[0] for r in store.fetchall("SELECT trace_id FROM traces")], pa.string())
    with store.transaction() as conn:
        derive_traces(conn, ids, set_based=False)
    reference = _rows(store)
    with store.transaction() as conn:
        derive_traces(conn, ids, set_based=True)
        conn.register("affected_traces", pa.table({"trace_id": ids}))
        settled = len(settle(conn).trace_ids)
        conn.unregister("affected_traces")
    return reference, _rows(store), len(ids), settled


@pytest.fixture(scope="module")
def every_capture(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, Any, Any]]:
    """Every capture ingested into one store, derived both ways in one go (the SQL fold over all
    of them at once, as at scale): capture → (its new traces, Python rows, SQL-fold rows)."""
    traces: dict[str, set[str]] = {}
    with Store(tmp_path_factory.mktemp("captures") / "store.duckdb") as store:
        for capture in CAPTURES:
            before = {r[0] for r in store.fetchall("SELECT trace_id FROM traces")}
            ingest(store, _otlp_files(FIXTURES / capture))
            traces[capture] = {r[0] for r in store.fetchall("SELECT trace_id FROM traces")} - before
        (calls, definitions), (folded_calls, folded_definitions), _, _ = _both(store)

    def of(rows: list[Any], keep: set[str]) -> list[Any]:
        return [r for r in rows if r[0] in keep]

    return {
        capture: (
            len(ids),
            (of(calls, ids), of(definitions, ids)),
            (of(folded_calls, ids), of(folded_definitions, ids)),
        )
        for capture, ids in traces.items()
    }


@pytest.mark.parametrize("capture", CAPTURES)
def test_sql_fold_gives_the_python_rows(capture: str, every_capture: dict[str, tuple[int, Any, Any]]) -> None:
    traces, reference, folded = every_capture[capture]
    assert traces > 0, f"{capture}: no traces of its own (its trace ids are another capture's)"
    assert folded == reference


def test_the_common_case_is_settled_by_sql(tmp_path: Path) -> None:
    """Chat spans with tool_call parts (structured arguments) and execute_tool spans by id,
    histories repeating earlier turns, failed tools, last responses never executed."""
    spans = otlp_workload.make_spans(3 * otlp_workload.BATCH, seed=5)
    lines = [otlp_workload.to_otlp_json(b) for b in otlp_workload.encode_requests(spans)]
    path = tmp_path / "traces.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    with Store(tmp_path / "store.duckdb") as store:
        ingest(store, [str(path)])
        reference, folded, traces, settled = _both(store)
        statuses = {r[0] for r in store.fetchall("SELECT DISTINCT status FROM tool_calls")}
    assert len(reference[0]) > 100
    assert folded == reference
    assert settled == traces
    assert statuses == {"ok", "error", "unknown"}


def test_some_captured_producer_is_settled_by_sql(tmp_path: Path) -> None:
    with Store(tmp_path / "store.duckdb") as store:
        ingest(store, _otlp_files(FIXTURES / "producers" / "otel-genai-openai" / "parallel"))
        reference, folded, traces, settled = _both(store)
    assert folded == reference
    assert settled == traces


@pytest.fixture(scope="module")
def shredder() -> Iterator[duckdb.DuckDBPyConnection]:
    """One connection for every capture, as `ingest` shreds every group on one."""
    con = duckdb.connect()
    yield con
    con.close()


@pytest.mark.parametrize(
    "capture", [c for c in CAPTURES if (FIXTURES / c / "collector-traces.jsonl").exists()]
)
def test_shredded_tool_columns_are_the_python_ones(capture: str, shredder: duckdb.DuckDBPyConnection) -> None:
    lines = (FIXTURES / capture / "collector-traces.jsonl").read_bytes().splitlines()
    table, _ = shred_traces(shredder, [line for line in lines if line.strip()])
    assert table.num_rows > 0
    for row in table.select(["attributes", *TOOL_COLUMN_NAMES]).to_pylist():
        assert tuple(row[n] for n in TOOL_COLUMN_NAMES) == tool_columns(orjson.loads(row["attributes"]))


def _span(trace: str, span: str, parent: str | None, start: int, attrs: dict[str, Any]) -> dict[str, Any]:
    def value(v: Any) -> dict[str, Any]:
        return {"intValue": str(v)} if isinstance(v, int) else {"stringValue": v}

    out = {
        "traceId": trace, "spanId": span, "name": "s", "kind": 1,
        "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + 5), "flags": 256,
        "attributes": [{"key": k, "value": value(v)} for k, v in attrs.items()],
    }  # fmt: skip
    if parent:
        out["parentSpanId"] = parent
    return out


def _call_part(call_id: str, arguments: Any) -> str:
    part = {"type": "tool_call", "id": call_id, "name": "f", "arguments": arguments}
    return orjson.dumps([{"role": "assistant", "parts": [part]}]).decode()


HOSTILE = {
    "invalid output JSON": {
        "gen_ai.output.messages": '[{"role": "assistant", "parts": [{"type": "tool_call"'
    },
    "huge exponent": {"gen_ai.output.messages": _call_part("c1", {"x": 1}).replace("1}", "1e999}")},
    "surrogate escape": {"gen_ai.output.messages": _call_part("c1", '{"x": "\\ud800"}')},
    "number where text is read": {"gen_ai.output.messages": _call_part("c1", 5)},
    "structured arguments the tool span spells otherwise": {
        "gen_ai.output.messages": _call_part("c1", {"b": 1, "a": 2})
    },
    "tool_calls key": {"gen_ai.output.messages": '[{"role": "assistant", "tool_calls": [{"id": "c1"}]}]'},
    "string arguments": {"gen_ai.output.messages": _call_part("c1", '{"a": 2, "b": 1}')},
}


@pytest.mark.parametrize("shape", sorted(HOSTILE))
def test_shapes_the_sql_must_not_misread(shape: str, tmp_path: Path) -> None:
    trace = "ab" * 16
    chat = {"gen_ai.operation.name": "chat", **HOSTILE[shape]}
    tool = {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "f", "gen_ai.tool.call.id": "c1",
        "gen_ai.tool.call.arguments": '{"a": 2, "b": 1}', "gen_ai.tool.call.result": "ok",
    }  # fmt: skip
    spans = [
        _span(trace, "01" * 8, None, 10, {"gen_ai.operation.name": "invoke_agent"}),
        _span(trace, "02" * 8, "01" * 8, 20, chat),
        _span(trace, "03" * 8, "01" * 8, 30, tool),
    ]
    body = {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {"name": "x"}, "spans": spans}]}]}
    path = tmp_path / "t.jsonl"
    path.write_bytes(orjson.dumps(body) + b"\n")
    with Store(tmp_path / "store.duckdb") as store:
        summary = ingest(store, [str(path)])
        reference, folded, traces, _ = _both(store)
    assert not summary.problems and traces == 1
    assert folded == reference
