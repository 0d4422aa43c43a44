"""What `compare` reads, at any size (issue 36, decision 480): the two sides' results joined by
case in one ordered query and streamed a batch of rows at a time, then, for the flips alone, why
their failing traces failed.

A side is one run or several, in order; a case's trials on a side are its results in run order,
then repeat order (a result without a repeat index counts as repeat 0, after one that has it),
then report order (`store.run_report`: a multi-turn case's turns as played, then trace id) —
what `report.comparison.trials` makes of whole reports. Results without a case are left out.

Storage only: rows as the report states them (`failure_class` as `taxonomy`, the repeat index 0
when unknown), never a comparison (`report.comparison.Pairing` builds it).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from traceladder.store.db import Store
from traceladder.store.readers import json_or_none

BATCH_ROWS = 10_000  # result rows brought into Python at a time
TRIAL_FIELDS = ("dimension", "trace_id", "verdict", "taxonomy", "repeat_index")

# The runs compared, as parameters (no Arrow table: `compare` need not import pyarrow, ~60 MB).
_COMPARED = """
compared_runs AS (
    SELECT unnest($runs::VARCHAR[]) AS run_id, unnest($sides::INTEGER[]) AS side,
           unnest($positions::INTEGER[]) AS position
)
"""
_TRIALS = f"""
WITH {_COMPARED}
SELECT t.case_id, s.side, t.dimension, t.trace_id, t.verdict, t.failure_class AS taxonomy,
       coalesce(t.repeat_index, 0) AS repeat_index
FROM trace_results t JOIN compared_runs s USING (run_id)
LEFT JOIN case_turns ct ON ct.trace_id = t.trace_id
WHERE coalesce(t.case_id, '') <> ''
ORDER BY t.case_id, s.side, s.position, coalesce(t.repeat_index, 0), t.repeat_index IS NULL,
         ct.turn NULLS FIRST, t.trace_id
"""
# A trace's explanation and its first finding in report order (`store.run_report`'s findings).
_DETAILS = """
WITH failing_traces AS (SELECT DISTINCT unnest($ids::VARCHAR[]) AS trace_id),
first AS (
    SELECT trace_id, rung, code, tool, param, expected, actual, message FROM findings
    SEMI JOIN failing_traces USING (trace_id)
    QUALIFY row_number() OVER (PARTITION BY trace_id ORDER BY rung, ordinal, code, param, message) = 1
)
SELECT w.trace_id, r.explanation, f.rung, f.code, f.tool, f.param, f.expected, f.actual, f.message,
       f.trace_id IS NOT NULL
FROM failing_traces w LEFT JOIN trace_results r USING (trace_id) LEFT JOIN first f USING (trace_id)
"""


def case_trials(
    store: Store, a: Sequence[str], b: Sequence[str], *, batch: int = BATCH_ROWS
) -> Iterator[tuple[str, list[dict[str, Any]], list[dict[str, Any]]]]:
    """(case id, its trials on side `a`, its trials on side `b`) for every case either side ran,
    in case order; each trial a dict of `TRIAL_FIELDS`. One query, read `batch` rows at a time:
    Python holds a batch and one case's trials, never a side's results. The store's lock is held
    until the last case is taken."""
    params = {
        "runs": [*a, *b],
        "sides": [0] * len(a) + [1] * len(b),
        "positions": [*range(len(a)), *range(len(b))],
    }
    with store.lock:
        cursor = store.conn.execute(_TRIALS, params)
        case: str | None = None
        trials: tuple[list[dict[str, Any]], list[dict[str, Any]]] = ([], [])
        # fetched until a fetch is empty: the connection takes no other query while its result is open
        while rows := cursor.fetchmany(batch):
            for case_id, side, *fields in rows:
                if case_id != case:
                    if case is not None:
                        yield case, *trials
                    case, trials = case_id, ([], [])
                trials[side].append(dict(zip(TRIAL_FIELDS, fields, strict=True)))
        if case is not None:
            yield case, *trials


def failure_details(store: Store, trace_ids: Sequence[str]) -> list[tuple[str | None, dict[str, Any] | None]]:
    """Per trace id, in order: its result's explanation and its first finding (rung, code, tool,
    param, expected, actual, message — as a report states it), or None when it has none."""
    if not trace_ids:
        return []
    found = {row[0]: row[1:] for row in store.fetchall(_DETAILS, {"ids": list(trace_ids)})}
    out: list[tuple[str | None, dict[str, Any] | None]] = []
    for trace_id in trace_ids:
        explanation, rung, code, tool, param, expected, actual, message, has = found[trace_id]
        finding = {
            "rung": rung, "code": code, "tool": tool, "param": param,
            "expected": json_or_none(expected), "actual": json_or_none(actual), "message": message,
        }  # fmt: skip
        out.append((explanation, finding if has else None))
    return out
