"""Loading a run's stored results into a ReportV1 (one query per table, no re-judging)."""

from __future__ import annotations

import json
from typing import Any

from traceladder.errors import UserError
from traceladder.evaluators.report import build_report
from traceladder.storage.db import Store


def latest_run(store: Store) -> str:
    rows = store.fetchall("SELECT run_id FROM runs ORDER BY started_at DESC LIMIT 1")
    if not rows:
        rows = store.fetchall("SELECT run_id FROM results ORDER BY evaluated_at DESC LIMIT 1")
    if not rows:
        raise UserError(f"no runs in {store.path}; run `traceladder run` first")
    return str(rows[0][0])


def _dicts(store: Store, sql: str, params: Any) -> list[dict[str, Any]]:
    with store.lock:
        cursor = store.conn.execute(sql, params)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def load_report(store: Store, run_id: str, known_tools: tuple[str, ...]) -> dict[str, Any]:
    runs = _dicts(store, "SELECT * FROM runs WHERE run_id = ?", [run_id])
    run: dict[str, Any] = runs[0] if runs else {"run_id": run_id, "model": None, "status": "external"}
    for key in ("config", "input_hashes", "selection"):
        if isinstance(run.get(key), str):
            run[key] = json.loads(run[key])
    for key in ("started_at", "finished_at"):
        if run.get(key) is not None:
            run[key] = run[key].isoformat()
    results = _dicts(store, "SELECT * FROM results WHERE run_id = ? ORDER BY case_id, repeat_index", [run_id])
    if not results:
        raise UserError(f"run {run_id} has no results; run `traceladder evaluate --run {run_id}` first")
    for r in results:
        r["evidence"] = json.loads(r["evidence"]) if r["evidence"] else {}
        r.pop("evaluated_at", None)
    run["evaluator_version"] = results[0]["evaluator_version"]
    findings = _dicts(
        store,
        "SELECT * FROM findings WHERE run_id = ? "
        "ORDER BY case_id, repeat_index, rung, ordinal, code, param, message",
        [run_id],
    )
    for f in findings:
        f["expected"] = json.loads(f["expected"]) if f["expected"] else None
        f["actual"] = json.loads(f["actual"]) if f["actual"] else None
    calls: dict[str, list[dict[str, Any]]] = {}
    rows = _dicts(
        store,
        "SELECT tc.trace_id, tc.ordinal, tc.tool_name AS tool, tc.arguments_raw, tc.status, tc.error_type "
        "FROM tool_calls tc SEMI JOIN (SELECT trace_id FROM results WHERE run_id = ?) r USING (trace_id) "
        "ORDER BY tc.trace_id, tc.ordinal",
        [run_id],
    )
    for row in rows:
        trace = row.pop("trace_id")
        try:
            row["arguments"] = json.loads(row["arguments_raw"]) if row["arguments_raw"] is not None else None
        except ValueError:
            row["arguments"] = None  # invalid JSON: arguments_raw keeps what the model sent
        calls.setdefault(trace, []).append(row)
    return build_report(run, results, findings, calls, known_tools)
