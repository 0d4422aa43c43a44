"""What a report's summary and the gate count: one row per case run (decision 460).

A judged trace is one case run — except the turns of a multi-turn case (`case_turns`), which are
each their own trace and result but together one case run, whose verdict is its conversation's
(`conversation_results`, the fold of its turns and its conversation-scope checks). So that the
summary's counts, its pass rate and the gate's read one definition, both count this relation:

- a trace that is not a turn of a multi-turn case: its `trace_results` row as it is;
- a multi-turn case run (run, case, repeat): one row, the result of the turn that decided its
  conversation (else its last turn), with the conversation's verdict. Its failure class (a FAIL
  only) is the conversation finding's raised at the deciding turn (e.g. UNCONFIRMED_ACTION at a
  turn that itself passed; the fold puts such a finding first), else the turn's own; its
  explanation is the turn's own where the turn decided it by its own verdict, else the
  conversation's reason. A case run of several turns whose conversation has no verdict yet is
  NOT_EVALUATED (never a turn's verdict standing in for the conversation's); a case run of one
  turn is that turn. Its `settled_at` is the turn's only where the turn's verdict is the case's.

Storage only: SQL text over the relation of `trace_results` rows a report covers.
"""

from __future__ import annotations

# The latest live verdict of each conversation (judging replaces it; several rows only in a race).
LATEST_CONVERSATION_RESULTS = """
SELECT conversation_id, arg_max(verdict, evaluated_at) AS verdict,
       arg_max(deciding_turn, evaluated_at) AS deciding_turn, arg_max(reason, evaluated_at) AS reason
FROM conversation_results WHERE run_id IS NULL GROUP BY conversation_id
"""


def case_level(rows: str) -> str:
    """A SELECT of the case runs of `rows` (a relation of `trace_results` rows), one row each,
    with `trace_results`' columns (module docstring). `rows` is named where it is read, never in
    a CTE read twice: DuckDB would materialise it, every column of every trace (the evidence
    included), and a summary's memory would grow with the run."""
    return f"""
WITH turns AS (
    SELECT s.trace_id, ct.run_id AS t_run, ct.case_id AS t_case, ct.repeat_index AS t_repeat,
           coalesce(c.turn, ct.turn) AS t_turn, c.conversation_id,
           count(*) OVER (PARTITION BY ct.run_id, ct.case_id, ct.repeat_index) AS played
    FROM (SELECT trace_id FROM {rows}) s JOIN case_turns ct USING (trace_id)
    LEFT JOIN conversations c USING (trace_id)
),
judged AS (
    SELECT t.*, cv.verdict AS c_verdict, cv.deciding_turn, cv.reason,
           (SELECT f.finding_class FROM conversation_findings f
            WHERE f.conversation_id = t.conversation_id
              AND f.turn IS NOT DISTINCT FROM cv.deciding_turn LIMIT 1) AS c_class,
           row_number() OVER (PARTITION BY t.t_run, t.t_case, t.t_repeat
                              ORDER BY t.t_turn = cv.deciding_turn DESC NULLS LAST, t.t_turn DESC) AS pick
    FROM turns t LEFT JOIN ({LATEST_CONVERSATION_RESULTS}) cv USING (conversation_id)
)
SELECT * FROM {rows} s WHERE s.trace_id NOT IN (SELECT trace_id FROM turns)
UNION ALL BY NAME
SELECT s.* REPLACE (
    CASE WHEN j.c_verdict IS NOT NULL THEN j.c_verdict
         WHEN j.played = 1 THEN s.verdict ELSE 'NOT_EVALUATED' END AS verdict,
    CASE WHEN j.c_verdict IS NULL AND j.played = 1 THEN s.failure_class
         WHEN j.c_verdict = 'FAIL' THEN coalesce(j.c_class, s.failure_class)
    END AS failure_class,
    CASE WHEN j.c_verdict IS NULL AND j.played = 1 THEN s.explanation
         WHEN j.c_verdict IS NULL THEN 'the conversation of this case run has no verdict yet'
         WHEN j.c_class IS NULL AND j.c_verdict = s.verdict THEN s.explanation
         ELSE j.reason END AS explanation,
    -- a FAIL a conversation check decided was settled by no rung of the turn that passed
    CASE WHEN j.c_verdict IS NULL OR j.c_verdict = s.verdict THEN s.settled_at END AS settled_at
)
FROM {rows} s JOIN judged j USING (trace_id) WHERE j.pick = 1
"""
