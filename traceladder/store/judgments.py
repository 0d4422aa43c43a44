"""The judge's tables: the judgment cache (`judgments`), which judgment each trace got
(`trace_judgments`), and the judge's own spans (in `spans`, source 'judge'). Arrow in, one
transaction; storage knows rows, never the judge.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import duckdb
import pyarrow as pa

from traceladder.store.db import Store, trace_id_table
from traceladder.store.spans import SPAN_COLUMNS
from traceladder.text import utf8_deep

_S, _L, _F = pa.string(), pa.int64(), pa.float64()
JUDGMENT_SCHEMA = pa.schema(
    [
        ("judge_model", _S), ("prompt_hash", _S), ("trajectory_hash", _S), ("verdict", _S), ("criteria", _S),
        ("rubric_version", _S), ("input_tokens", _L), ("output_tokens", _L), ("cost_usd", _F),
        ("attempts", pa.int32()), ("judge_trace_id", _S), ("judged_trace_id", _S),
        ("created_at", pa.timestamp("us")),
    ]
)  # fmt: skip
TRACE_JUDGMENT_SCHEMA = pa.schema(
    [
        ("trace_id", _S), ("run_id", _S), ("judge_model", _S), ("prompt_hash", _S), ("trajectory_hash", _S),
        ("outcome", _S), ("error", _S), ("input_tokens", _L), ("output_tokens", _L), ("cost_usd", _F),
        ("judge_trace_id", _S), ("evaluated_at", pa.timestamp("us")),
    ]
)  # fmt: skip


def cached_judgments(store: Store, model: str, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """(prompt hash, trajectory hash) → the cached criteria JSON, for the keys that have one."""
    pairs = sorted(set(keys))
    if not pairs:
        return {}
    wanted = pa.table({"prompt_hash": [p for p, _ in pairs], "trajectory_hash": [t for _, t in pairs]})
    with store.registered("wanted_judgments", wanted) as conn:
        rows = conn.execute(
            "SELECT j.prompt_hash, j.trajectory_hash, j.criteria FROM judgments j "
            "SEMI JOIN wanted_judgments w USING (prompt_hash, trajectory_hash) WHERE j.judge_model = ?",
            [model],
        ).fetchall()
    return {(p, t): criteria for p, t, criteria in rows}


def save_judge_phase(
    store: Store,
    judgments: Sequence[dict[str, Any]],
    trace_rows: Sequence[dict[str, Any]],
    judged_trace_ids: Sequence[str],
    spans: pa.Table | None,
) -> None:
    """In one transaction: new judgments (replacing a cached one for the same key: `--no-cache`
    asked again), each judged trace's judgment row (replacing its previous one), the judge's spans."""
    with store.transaction() as conn:
        if judgments:
            conn.register("new_judgments", _table(judgments, JUDGMENT_SCHEMA))
            try:
                conn.execute(
                    "DELETE FROM judgments WHERE (judge_model, prompt_hash, trajectory_hash) IN "
                    "(SELECT (judge_model, prompt_hash, trajectory_hash) FROM new_judgments)"
                )
                conn.execute(
                    f"INSERT INTO judgments ({', '.join(JUDGMENT_SCHEMA.names)}) SELECT * FROM new_judgments"
                )
            finally:
                conn.unregister("new_judgments")
        conn.register("judged_now", trace_id_table(judged_trace_ids))
        conn.register("new_trace_judgments", _table(trace_rows, TRACE_JUDGMENT_SCHEMA))
        try:
            conn.execute("DELETE FROM trace_judgments WHERE trace_id IN (SELECT trace_id FROM judged_now)")
            names = ", ".join(TRACE_JUDGMENT_SCHEMA.names)
            conn.execute(f"INSERT INTO trace_judgments ({names}) SELECT * FROM new_trace_judgments")
        finally:
            conn.unregister("judged_now")
            conn.unregister("new_trace_judgments")
        if spans is not None and spans.num_rows:
            # Not through `write_spans`: a judge's trace is not a unit to judge, so it gets no tool
            # calls and no trace-index row (watch never sees it).
            cols = ", ".join(SPAN_COLUMNS)
            conn.register("judge_spans", spans.select(list(SPAN_COLUMNS)))
            try:
                conn.execute(f"INSERT INTO spans ({cols}) SELECT {cols} FROM judge_spans")
            finally:
                conn.unregister("judge_spans")


def forget_judgments(conn: duckdb.DuckDBPyConnection, trace_ids: pa.Table, kept: Sequence[str]) -> None:
    """Drop the judgment rows of re-evaluated traces the judge did not see this time (no judge, or
    no longer survivors), inside the results' transaction: a report never pairs a new verdict with
    an old judgment."""
    conn.register("reevaluated", trace_ids)
    conn.register("kept_judgments", trace_id_table(kept))
    try:
        conn.execute(
            "DELETE FROM trace_judgments WHERE trace_id IN (SELECT trace_id FROM reevaluated) "
            "AND trace_id NOT IN (SELECT trace_id FROM kept_judgments)"
        )
    finally:
        conn.unregister("reevaluated")
        conn.unregister("kept_judgments")


def _table(rows: Iterable[dict[str, Any]], schema: pa.Schema) -> pa.Table:
    """Rows as Arrow; a judge's reply may carry lone surrogates (JSON "\ud800"), stored as U+FFFD."""
    rows = list(rows)
    try:
        return pa.Table.from_pylist(rows, schema)
    except UnicodeEncodeError:
        return pa.Table.from_pylist(utf8_deep(rows), schema)
