"""The failure taxonomy and its one priority order.

A trace's dominant failure class — and a call's, when one call has several problems — is the first
class present in `PRIORITY`: the most specific, lowest-rung cause first, then call-level
omissions, then trajectory and chain problems, then what later rungs add. Every finding stays
visible; the order only names the headline.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum


class FailureCode(StrEnum):
    """The built-in failure classes, in priority order: the one owner of these words. A `StrEnum`,
    so each member *is* its string — stored findings, JSON reports and SQL filters read exactly
    `PARAM_WRONG_FORMAT`, … as before. A plug-in rung may write codes of its own (`Finding.code`
    stays `str`); they rank after these."""

    UNKNOWN_TOOL = "UNKNOWN_TOOL"
    TOOL_WRONG = "TOOL_WRONG"
    PARAM_MISSING = "PARAM_MISSING"
    PARAM_WRONG_FORMAT = "PARAM_WRONG_FORMAT"
    PARAM_HALLUCINATED_ID = "PARAM_HALLUCINATED_ID"
    PARAM_WRONG_VALUE = "PARAM_WRONG_VALUE"
    PARAM_UNEXPECTED = "PARAM_UNEXPECTED"
    CALL_MISSING = "CALL_MISSING"
    CALL_UNEXPECTED = "CALL_UNEXPECTED"
    CALL_EXTRA = "CALL_EXTRA"
    ORDER_WRONG = "ORDER_WRONG"
    CHAIN_BROKEN = "CHAIN_BROKEN"
    # invariants (open path): a forbidden action first, then what the policy bounds
    FORBIDDEN_TOOL = "FORBIDDEN_TOOL"
    TOOL_NOT_ALLOWED = "TOOL_NOT_ALLOWED"
    UNCONFIRMED_ACTION = "UNCONFIRMED_ACTION"
    PARAM_PATTERN = "PARAM_PATTERN"
    DUPLICATE_CALL = "DUPLICATE_CALL"
    TOOL_ERRORS = "TOOL_ERRORS"
    TOO_MANY_TOOL_CALLS = "TOO_MANY_TOOL_CALLS"
    TOO_MANY_TURNS = "TOO_MANY_TURNS"
    SLOW_TRACE = "SLOW_TRACE"
    # the end state (rung 4, state), then the judge's rubric criteria (rung 5)
    STATE_MISMATCH = "STATE_MISMATCH"
    ANSWER_UNGROUNDED = "ANSWER_UNGROUNDED"
    POLICY_VIOLATION = "POLICY_VIOLATION"
    TOOL_CHOICE_UNSOUND = "TOOL_CHOICE_UNSOUND"
    JUDGE_FAIL = "JUDGE_FAIL"


# Plain strings: `dominant` runs once per judged trace, and plain keys keep its lookups exact-type.
PRIORITY: tuple[str, ...] = tuple(code.value for code in FailureCode)
_RANK = {code: rank for rank, code in enumerate(PRIORITY)}


def dominant(codes: Iterable[str | None]) -> str | None:
    """The highest-priority class among `codes`; classes outside the list (a plug-in rung's) rank
    after it, alphabetically. None when there are none."""
    present = {c for c in codes if c}
    if not present:
        return None
    return min(present, key=lambda c: (_RANK.get(c, len(PRIORITY)), c))
