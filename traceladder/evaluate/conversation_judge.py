"""Judging a conversation: its `[conversation]` checks across turns, then the verdict fold. Pure.

The checks are the invariants rung's own (`evaluate.rungs.invariants.check`), run once over the
conversation's calls taken together, in turn order — so a request in turn 1 confirmed in turn 2
is confirmed, a forbidden tool in any turn is found, and `max_tool_calls` is a budget for the whole
dialogue. Each finding is given back to the turn whose call raised it (None: the whole dialogue).
Per-turn rules stay per trace; their verdicts come in as the turns' verdicts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from traceladder.evaluate.conversation_verdict import (
    ConversationFinding,
    ConversationVerdict,
    conversation_verdict,
)
from traceladder.evaluate.rungs import invariants
from traceladder.evaluate.rungs.policy import Policy
from traceladder.evaluate.rungs.types import Call, VerdictValue
from traceladder.trace_facts import TraceFacts


class Turn(NamedTuple):
    """One turn as judged: its trace, its verdict (None: not judged yet) and its own calls."""

    trace_id: str
    verdict: str | None
    calls: Sequence[Call]


def conversation_findings(turns: Sequence[Turn], policy: Policy | None) -> list[ConversationFinding]:
    """The `[conversation]` checks over every turn's calls in order (none without a policy)."""
    if policy is None:
        return []
    calls: list[Call] = []
    turn_of: dict[int, int] = {}
    for index, turn in enumerate(turns):
        for call in turn.calls:
            ordinal = len(calls) + 1  # numbered across the conversation, so findings say where
            calls.append(call._replace(ordinal=ordinal))
            turn_of[ordinal] = index
    result = invariants.check(calls, TraceFacts(), policy)
    return [
        ConversationFinding(
            turn_of.get(f.ordinal) if f.ordinal is not None else None, f.code, f.message, f.tool or None
        )
        for f in result.findings
    ]


def judge_conversation(
    turns: Sequence[Turn], policy: Policy | None, extra: Sequence[ConversationFinding] = ()
) -> tuple[ConversationVerdict, list[ConversationFinding]]:
    """The conversation's verdict and findings. A turn not judged yet counts as NOT_EVALUATED.
    `extra`: findings found elsewhere (a goal case's `GOAL_NOT_MET`, `evaluate.goals`)."""
    findings = conversation_findings(turns, policy) + list(extra)
    verdicts = [t.verdict or VerdictValue.NOT_EVALUATED for t in turns]
    return conversation_verdict(verdicts, findings), findings
