"""What became of one survivor at rung 5: the closed vocabulary of `trace_judgments.outcome`.

A `StrEnum`, so each member *is* its string: the stored rows and the SQL that counts them
(`store.report_summary`'s rung-5 figures) read exactly the words they read before, and
`tests/judge/test_outcome_vocabulary.py` holds that SQL to these members.
"""

from __future__ import annotations

from enum import StrEnum


class JudgeOutcome(StrEnum):
    """One survivor's outcome at rung 5."""

    JUDGED = "judged"  # the judge answered (a call was made and charged)
    CACHED = "cached"  # a stored judgment of the same prompt and trajectory was reused, free
    OVER_BUDGET = "over_budget"  # the judge budget was spent first: not_evaluated at rung 5
    NO_ANSWER = "no_answer"  # the trace had no final answer to judge: not_evaluated at rung 5
    ERROR = "error"  # the call was made (and charged) but gave no usable verdict


# The outcomes a judge call was made for: those that carry tokens and cost.
CHARGED: tuple[JudgeOutcome, ...] = (JudgeOutcome.JUDGED, JudgeOutcome.ERROR)
