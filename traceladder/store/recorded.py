"""Reading stored traces to record them as a suite (`traceladder cases from-traces`): which traces
a selection names, and each trace's captured tool definitions with their descriptions.

Set-based like `readers`: one query selects the traces, one reads every definition of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import duckdb

from traceladder.errors import UserError
from traceladder.store.db import Store, trace_id_table

# Traces of our own judge are never production traffic.
_SELECT = """
SELECT t.trace_id FROM traces t
WHERE NOT EXISTS (SELECT 1 FROM spans s WHERE s.trace_id = t.trace_id AND s.source = 'judge')
  AND ($service IS NULL OR t.service = $service)
  AND ($version IS NULL OR t.service_version = $version)
  AND ($verdict IS NULL OR EXISTS (
        SELECT 1 FROM trace_results r WHERE r.trace_id = t.trace_id AND r.verdict = $verdict))
  AND ({where})
"""


@dataclass(frozen=True)
class Selection:
    """Which traces to record. Every filter given must hold; `sample` keeps that many of the
    matches, chosen by trace id the way OTel's ratio sampler ranks them (its low 64 bits), so the
    same store always gives the same sample."""

    trace_ids: tuple[str, ...] = ()
    verdict: str | None = None
    where: str | None = None
    service: str | None = None
    version: str | None = None
    sample: int | None = None


def select_traces(store: Store, selection: Selection) -> list[str]:
    """The selected trace ids, oldest first (ties by id). `--trace` ids must exist."""
    where = f"({selection.where})" if selection.where else "true"
    sql = _SELECT.format(where=where)
    params = {"service": selection.service, "version": selection.version, "verdict": selection.verdict}
    if selection.trace_ids:
        sql += " AND t.trace_id IN (SELECT trace_id FROM wanted_traces)"
    ranked = f"SELECT trace_id FROM traces WHERE trace_id IN ({sql})"
    if selection.sample is not None:
        ranked += f" ORDER BY right(trace_id, 16), trace_id LIMIT {int(selection.sample)}"
    ordered = (
        f"SELECT trace_id FROM traces WHERE trace_id IN ({ranked}) ORDER BY start_ns NULLS LAST, trace_id"
    )
    wanted = trace_id_table([t.lower() for t in selection.trace_ids])
    try:
        with store.registered("wanted_traces", wanted) as conn:
            found = [row[0] for row in conn.execute(ordered, params).fetchall()]
            known = {
                row[0]
                for row in conn.execute(
                    "SELECT trace_id FROM traces SEMI JOIN wanted_traces USING (trace_id)"
                ).fetchall()
            }
    except duckdb.Error as exc:
        if selection.where:
            message = str(exc).strip().splitlines()[0]
            raise UserError(f"--where is not a predicate over the traces table: {message}") from None
        raise
    missing = [t for t in selection.trace_ids if t.lower() not in known]
    if missing:
        raise UserError(
            f"no trace {missing[0]} in {store.path}; see `traceladder sql 'SELECT trace_id FROM traces'`"
        )
    return found


def read_services(store: Store, trace_ids: Sequence[str]) -> dict[str, str | None]:
    """trace → its service (`traces.service`)."""
    with store.registered("wanted_traces", trace_id_table(trace_ids)) as conn:
        rows = conn.execute("SELECT trace_id, service FROM traces SEMI JOIN wanted_traces USING (trace_id)")
        return dict(rows.fetchall())


def read_definitions(
    store: Store, trace_ids: Sequence[str]
) -> dict[str, list[tuple[str, str | None, str | None]]]:
    """trace → its captured definitions (name, description, parameters JSON text), in a stable order."""
    with store.registered("wanted_traces", trace_id_table(trace_ids)) as conn:
        rows = conn.execute(
            "SELECT DISTINCT trace_id, name, description, parameters FROM tool_definitions "
            "SEMI JOIN wanted_traces USING (trace_id) "
            "ORDER BY trace_id, name, parameters NULLS LAST, description"
        ).fetchall()
    out: dict[str, list[tuple[str, str | None, str | None]]] = {}
    for trace_id, name, description, parameters in rows:
        out.setdefault(trace_id, []).append((name, description, parameters))
    return out


def read_conversation_turns(store: Store, trace_ids: Sequence[str]) -> dict[str, tuple[str, int]]:
    """trace → (its conversation, its 0-based turn), as the store grouped them (`conversations`)."""
    with store.registered("wanted_traces", trace_id_table(trace_ids)) as conn:
        rows = conn.execute(
            "SELECT trace_id, conversation_id, turn FROM conversations "
            "SEMI JOIN wanted_traces USING (trace_id)"
        ).fetchall()
    return {trace_id: (conversation, turn) for trace_id, conversation, turn in rows}
