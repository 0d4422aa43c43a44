"""The failure taxonomy and its one priority order.

A trace's dominant failure class — and a call's, when one call has several problems — is the first
class present in `PRIORITY`: the most specific, lowest-rung cause first, then call-level
omissions, then trajectory and chain problems, then what later rungs add. Every finding stays
visible; the order only names the headline.
"""

from __future__ import annotations

from collections.abc import Iterable

PRIORITY: tuple[str, ...] = (
    "UNKNOWN_TOOL",
    "TOOL_WRONG",
    "PARAM_MISSING",
    "PARAM_WRONG_FORMAT",
    "PARAM_HALLUCINATED_ID",
    "PARAM_WRONG_VALUE",
    "PARAM_UNEXPECTED",
    "CALL_MISSING",
    "CALL_UNEXPECTED",
    "CALL_EXTRA",
    "ORDER_WRONG",
    "CHAIN_BROKEN",
    # invariants (open path): a forbidden action first, then what the policy bounds
    "FORBIDDEN_TOOL",
    "TOOL_NOT_ALLOWED",
    "UNCONFIRMED_ACTION",
    "PARAM_PATTERN",
    "DUPLICATE_CALL",
    "TOOL_ERRORS",
    "TOO_MANY_TOOL_CALLS",
    "TOO_MANY_TURNS",
    "SLOW_TRACE",
    # the end state (rung 4, state), then the judge's rubric criteria (rung 5)
    "STATE_MISMATCH",
    "ANSWER_UNGROUNDED",
    "POLICY_VIOLATION",
    "TOOL_CHOICE_UNSOUND",
    "JUDGE_FAIL",
)
_RANK = {code: rank for rank, code in enumerate(PRIORITY)}


def dominant(codes: Iterable[str | None]) -> str | None:
    """The highest-priority class among `codes`; classes outside the list (a plug-in rung's) rank
    after it, alphabetically. None when there are none."""
    present = {c for c in codes if c}
    if not present:
        return None
    return min(present, key=lambda c: (_RANK.get(c, len(PRIORITY)), c))
