"""A result's explanation and the note a PASS's ends with, kept apart (issue 34, decision 630)."""

from __future__ import annotations

from traceladder.store.migrations.base import Migration

# `trace_results.reason`: the explanation without the note the ladder appends to a PASS on which
# rungs could not run (" (not evaluated: invariants)"); NULL when the explanation has no note, so
# the explanation is the reason. The ladder writes it from then on. For rows written before, it is
# derived here once, by the rule the HTML report applied on every render until then: the note is
# exactly `' (not evaluated: ' || the names of the trace's not_evaluated rungs in report order ||
# ')'`, and only a PASS whose explanation ends with exactly that has one. Frozen on purpose: it
# states what the ladder wrote before this migration, whatever it writes later.
RESULT_NOTES: Migration = (
    "015_result_notes",
    """
        ALTER TABLE trace_results ADD COLUMN reason VARCHAR;
        UPDATE trace_results AS t
        SET reason = substring(t.explanation, 1, length(t.explanation) - length(n.note))
        FROM (
            SELECT trace_id,
                   ' (not evaluated: ' || string_agg(rung_name, ', ' ORDER BY rung, rung_name) || ')' AS note
            FROM rung_results WHERE status = 'not_evaluated' GROUP BY trace_id
        ) AS n
        WHERE t.trace_id = n.trace_id AND t.verdict = 'PASS' AND ends_with(t.explanation, n.note);
        """,
)
