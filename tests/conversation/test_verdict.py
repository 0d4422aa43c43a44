"""The conversation verdict fold: every rule of its docstring, and its refusals."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from traceladder.evaluate.conversation_verdict import ConversationFinding, conversation_verdict
from traceladder.evaluate.rungs.types import VerdictValue

PASS, FAIL, SKIP, ERR, NE = "PASS", "FAIL", "SKIP", "AGENT_ERROR", "NOT_EVALUATED"


def test_no_turns_is_not_evaluated() -> None:
    v = conversation_verdict([], [])
    assert (v.verdict, v.deciding_turn, v.reason) == (VerdictValue.NOT_EVALUATED, None, "no turns")


def test_all_pass() -> None:
    v = conversation_verdict([PASS, PASS, SKIP], [])
    assert (v.verdict, v.deciding_turn, v.reason) == (VerdictValue.PASS, None, "2 of 3 turns passed")


def test_earliest_failing_turn_decides() -> None:
    v = conversation_verdict([PASS, ERR, FAIL, FAIL], [])
    assert (v.verdict, v.deciding_turn, v.reason) == (VerdictValue.FAIL, 2, "turn 3 failed")


def test_conversation_finding_fails_a_conversation_of_passing_turns() -> None:
    finding = ConversationFinding(1, "UNCONFIRMED_ACTION", "cancel_order never confirmed", "confirm")
    v = conversation_verdict([PASS, PASS, PASS], [finding])
    assert v.verdict is VerdictValue.FAIL and v.deciding_turn == 1
    assert v.reason == "UNCONFIRMED_ACTION at turn 2: cancel_order never confirmed"


def test_finding_beats_bare_turn_failure_at_the_same_turn_and_earlier_turn_wins() -> None:
    finding = ConversationFinding(2, "FORBIDDEN_TOOL", "drop_db is forbidden")
    assert conversation_verdict([PASS, PASS, FAIL], [finding]).reason.startswith("FORBIDDEN_TOOL")
    assert conversation_verdict([PASS, FAIL, PASS], [finding]).deciding_turn == 1


def test_whole_dialogue_finding_is_decided_at_the_last_turn() -> None:
    finding = ConversationFinding(None, "TOO_MANY_TOOL_CALLS", "7 calls > 6")
    v = conversation_verdict([PASS, PASS], [finding])
    assert (v.verdict, v.deciding_turn) == (VerdictValue.FAIL, 1)


def test_agent_error_then_not_evaluated_then_skip() -> None:
    assert conversation_verdict([PASS, NE, ERR], []).verdict is VerdictValue.AGENT_ERROR
    v = conversation_verdict([PASS, NE, NE], [])
    assert (v.verdict, v.deciding_turn) == (VerdictValue.NOT_EVALUATED, 1)
    assert conversation_verdict([SKIP, SKIP], []).verdict is VerdictValue.SKIP


def test_refuses_an_unknown_word_and_a_turn_out_of_range() -> None:
    with pytest.raises(ValueError, match="not a verdict: 'OK'"):
        conversation_verdict(["OK"], [])
    with pytest.raises(ValueError, match="names turn 3, but the conversation has 2 turns"):
        conversation_verdict([PASS, PASS], [ConversationFinding(3, "X", "m")])


@given(st.lists(st.sampled_from([PASS, FAIL, SKIP, ERR, NE]), max_size=30))
def test_pass_only_when_no_turn_failed_errored_or_went_unjudged(turns: list[str]) -> None:
    v = conversation_verdict(turns, [])
    assert (v.verdict is VerdictValue.PASS) == (PASS in turns and not {FAIL, ERR, NE} & set(turns))
    if v.deciding_turn is not None:
        assert turns[v.deciding_turn] == v.verdict
