"""Traces already tagged with case ids, made a run (`traceladder runs add --where …`): which
traces a predicate selects, and their `case_runs` rows. The only module with this SQL."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import duckdb

from traceladder.errors import UserError
from traceladder.store.bulk import insert_rows
from traceladder.store.db import Store

# A trace's case is the one its root (or invoke_agent) span names, as the judging units read it
# (`store.readers`); the predicate runs over `traces` alone, so its column names are unambiguous.
_TAGGED = """
WITH chosen AS (SELECT * FROM traces WHERE ({where})),
roots AS (
    SELECT s.trace_id,
           max(s.attributes->>'$."traceladder.case.id"') AS case_id,
           bool_or(s.status_code = 'ERROR') AS root_error,
           max(s.error_type) AS error_type
    FROM spans s SEMI JOIN chosen c ON c.trace_id = s.trace_id
    WHERE (s.operation = 'invoke_agent' OR s.parent_span_id IS NULL) AND s.source IS DISTINCT FROM 'judge'
    GROUP BY s.trace_id
)
SELECT c.trace_id, r.case_id, coalesce(r.root_error, false), r.error_type, c.service_version,
       (SELECT min(cr.run_id) FROM case_runs cr WHERE cr.trace_id = c.trace_id) AS in_run,
       c.end_ns - c.start_ns, c.service
FROM chosen c JOIN roots r USING (trace_id)
WHERE r.case_id IS NOT NULL
ORDER BY c.start_ns NULLS LAST, c.trace_id
"""


@dataclass(frozen=True)
class TaggedTrace:
    trace_id: str
    case_id: str
    error: bool  # the root span says the agent failed
    error_type: str | None
    service_version: str | None
    in_run: str | None  # a run the trace already belongs to
    duration_ns: int | None
    service: str | None


def tagged_traces(store: Store, where: str) -> list[TaggedTrace]:
    """The traces `where` (a SQL predicate over the `traces` table) selects that name a case,
    oldest first. `UserError` for a predicate DuckDB cannot run."""
    try:
        found = store.fetchall(_TAGGED.format(where=where))
    except duckdb.Error as exc:
        message = str(exc).strip().splitlines()[0]
        raise UserError(f"--where is not a predicate over the traces table: {message}") from None
    return [TaggedTrace(*row) for row in found]


@dataclass(frozen=True)
class TraceCaseRun:
    case_id: str
    repeat_index: int
    trace_id: str
    dimension: str | None
    agent_status: str
    error_type: str | None
    latency_ms: float | None


def add_case_runs(store: Store, run_id: str, case_runs: Sequence[TraceCaseRun]) -> None:
    """The `case_runs` rows of a run made from traces, in one transaction."""
    now = datetime.now(UTC).replace(tzinfo=None)
    with store.transaction() as conn:
        insert_rows(
            conn,
            "case_runs",
            ("run_id", "case_id", "repeat_index", "trace_id", "dimension", "agent_status", "error_type",
             "latency_ms", "finished_at"),
            [
                (run_id, c.case_id, c.repeat_index, c.trace_id, c.dimension, c.agent_status, c.error_type,
                 c.latency_ms, now)
                for c in case_runs
            ],
        )  # fmt: skip
