"""What a report shows of conversations (issue 33): the conversations a report's traces are turns
of, each with its verdict, the turn that decided it, its findings and every turn with that turn's
verdict and calls — read a page of conversations at a time, so a report holds one page, never the
run's (a page is the next `batch` conversation ids after the last one's, as `run_report` pages
results by key).

A conversation is shown when it has more than one turn or is a multi-turn case run: a trace that
is a conversation of one turn by itself is its result, shown once. Its verdict is its latest live
verdict (`conversation_results`); one not judged yet is NOT_EVALUATED with that reason.

Storage only: rows, never a document (`report.conversations` shapes them).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import duckdb

from traceladder.store.case_level import LATEST_CONVERSATION_RESULTS
from traceladder.store.db import Store
from traceladder.store.readers import json_or_none
from traceladder.store.trend_reads import TREND_VIEWS, trend_filter

BATCH_CONVERSATIONS = 200  # conversations (with every turn and call) held at once by a renderer

# The conversations of the scope's traces that a report shows (module docstring): the rows of
# conversations of several turns (those with a turn past the first) or of multi-turn case runs,
# joined with the scope — an inner join built on those few rows, never a hash of every
# conversation or trace of a large run (the summary's memory must not grow with it).
_SHOWN = """
SELECT DISTINCT m.conversation_id FROM ({rows}) s JOIN (
    SELECT c.trace_id, c.conversation_id FROM conversations c
    WHERE c.conversation_id IN (SELECT conversation_id FROM conversations WHERE turn > 0)
       OR c.trace_id IN (SELECT trace_id FROM case_turns)
) m USING (trace_id)
"""
_NOT_JUDGED = "not judged as a conversation yet"


@dataclass
class ConversationRows:
    """One shown conversation: its verdict row, its findings, and its turns in order, each
    (turn, trace id, verdict, case id, repeat, calls) — calls as `tool_calls` rows."""

    conversation_id: str
    verdict: str
    deciding_turn: int | None
    reason: str
    linked_by: str
    case_id: str | None = None
    repeat_index: int | None = None
    findings: list[dict[str, Any]] = field(default_factory=list)
    turns: list[dict[str, Any]] = field(default_factory=list)


def conversation_counts(store: Store, rows: str) -> dict[str, int]:
    """Verdict → shown conversations of `rows` (a relation of `trace_results` rows)."""
    sql = (
        f"SELECT coalesce(r.verdict, 'NOT_EVALUATED'), count(*) FROM ({_SHOWN.format(rows=rows)}) s "
        f"LEFT JOIN ({LATEST_CONVERSATION_RESULTS}) r USING (conversation_id) GROUP BY 1"
    )
    return {v: int(n) for v, n in store.fetchall(sql)}


def conversation_pages(
    store: Store, rows: str, batch: int = BATCH_CONVERSATIONS, *, failing: bool = False
) -> Iterator[list[ConversationRows]]:
    """The shown conversations of `rows`, `batch` at a time, by conversation id; `failing`: only
    those whose verdict is not PASS or SKIP (what the terminal lists)."""
    after: str | None = None
    shown = _SHOWN.format(rows=rows)
    if failing:
        shown = (
            f"SELECT s.conversation_id FROM ({shown}) s LEFT JOIN ({LATEST_CONVERSATION_RESULTS}) r "
            "USING (conversation_id) WHERE coalesce(r.verdict, 'NOT_EVALUATED') NOT IN ('PASS', 'SKIP')"
        )
    while True:
        with store.lock:
            page = _page(store.conn, shown, after, batch)
        if not page:
            return
        after = page[-1].conversation_id
        yield page


def _page(
    conn: duckdb.DuckDBPyConnection, shown: str, after: str | None, batch: int
) -> list[ConversationRows]:
    conn.execute(
        f"CREATE OR REPLACE TEMP TABLE page_conversations AS SELECT conversation_id FROM "
        f"({shown}) WHERE $after IS NULL OR conversation_id > $after "
        f"ORDER BY conversation_id LIMIT {int(batch)}",
        {"after": after},
    )
    try:
        heads = conn.execute(
            f"SELECT p.conversation_id, coalesce(r.verdict, 'NOT_EVALUATED'), r.deciding_turn, "
            f"coalesce(r.reason, '{_NOT_JUDGED}'), "
            f"(SELECT min(linked_by) FILTER (WHERE turn > 0) FROM conversations c "
            f" WHERE c.conversation_id = p.conversation_id) "
            f"FROM page_conversations p LEFT JOIN ({LATEST_CONVERSATION_RESULTS}) r USING (conversation_id) "
            f"ORDER BY p.conversation_id"
        ).fetchall()
        out = {
            cid: ConversationRows(cid, v, d, reason, linked or "none") for cid, v, d, reason, linked in heads
        }
        for cid, turn, cls, message, rule in conn.execute(
            "SELECT conversation_id, turn, finding_class, message, rule FROM conversation_findings "
            "SEMI JOIN page_conversations USING (conversation_id) "
            "ORDER BY conversation_id, turn NULLS LAST, finding_class, message"
        ).fetchall():
            out[cid].findings.append({"turn": turn, "finding_class": cls, "message": message, "rule": rule})
        turns = conn.execute(
            "SELECT c.conversation_id, c.turn, c.trace_id, "
            "coalesce((SELECT arg_max(r.verdict, r.evaluated_at) FROM trace_results r"
            " WHERE r.trace_id = c.trace_id), 'NOT_EVALUATED'), "
            "ct.case_id, ct.repeat_index "
            "FROM conversations c SEMI JOIN page_conversations USING (conversation_id) "
            "LEFT JOIN case_turns ct USING (trace_id) ORDER BY c.conversation_id, c.turn"
        ).fetchall()
        calls: dict[str, list[dict[str, Any]]] = {}
        for tid, ordinal, tool, raw, status, error_type in conn.execute(
            "SELECT t.trace_id, t.ordinal, t.tool_name, t.arguments_raw, t.status, t.error_type "
            "FROM tool_calls t SEMI JOIN (SELECT trace_id FROM conversations "
            "SEMI JOIN page_conversations USING (conversation_id)) p USING (trace_id) "
            "ORDER BY t.trace_id, t.ordinal"
        ).fetchall():
            calls.setdefault(tid, []).append(
                {
                    "ordinal": ordinal,
                    "tool": tool,
                    "arguments_raw": raw,
                    "arguments": json_or_none(raw),
                    "status": status,
                    "error_type": error_type,
                }  # fmt: skip
            )
        for cid, turn, tid, verdict, case_id, repeat in turns:
            entry = out[cid]
            if case_id is not None and entry.case_id is None:
                entry.case_id, entry.repeat_index = case_id, repeat
            entry.turns.append(
                {
                    "turn": turn,
                    "trace_id": tid,
                    "verdict": verdict,
                    "calls": calls.get(tid, []),
                }
            )
        return list(out.values())
    finally:
        conn.execute("DROP TABLE IF EXISTS page_conversations")


# Per trend bucket (`trend_traces`, filtered by `{where}`, keyed by its column `{key}`): the
# conversations of several turns whose last turn is in it, by their live verdict. A conversation
# is counted where it ended, once, unweighted (sampling keeps or drops traces, not dialogues).
_BUCKETS = """
WITH ended AS (
    SELECT c.conversation_id, arg_max(t.service, c.turn) AS service,
           arg_max(t.environment, c.turn) AS environment, arg_max(t.{key}, c.turn) AS k
    FROM conversations c JOIN (SELECT * FROM trend_traces WHERE {where}) t USING (trace_id)
    WHERE c.conversation_id IN (SELECT conversation_id FROM conversations GROUP BY 1 HAVING count(*) > 1)
    GROUP BY c.conversation_id
)
SELECT e.service, e.environment, e.k, coalesce(r.verdict, 'NOT_EVALUATED'), count(*)
FROM ended e LEFT JOIN ({latest}) r USING (conversation_id)
GROUP BY ALL
"""


def conversation_buckets(
    store: Store, by: str, service: str | None, environment: str | None
) -> dict[tuple[Any, Any, Any], dict[str, int]]:
    """(service, environment, bucket key) → verdict → conversations that ended in that bucket of
    `trend_traces` for bucket kind `by`, filtered as `trend`'s other reads are. A store written
    before conversations existed (migration 013, read without migrating) has none."""
    if not {"conversations", "conversation_results"} <= store.tables():
        return {}
    key = TREND_VIEWS[by][2]
    where, params = trend_filter(service, environment)
    sql = _BUCKETS.format(key=key, where=where, latest=LATEST_CONVERSATION_RESULTS)
    out: dict[tuple[Any, Any, Any], dict[str, int]] = {}
    for service, environment, k, verdict, n in store.fetchall(sql, params):
        out.setdefault((service, environment, k), {})[verdict] = int(n)
    return out
