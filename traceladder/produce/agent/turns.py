"""Playing a multi-turn case: its turns in order, each its own trace, one conversation.

Shared by the built-in loop (`produce.agent.loop`) and the agent under test (`produce.subject.case_run`): both
hand `play_turns` a function that plays one turn (and carries the history itself), and get back
the case's outcome with every turn's. A turn that ends in an error (AGENT_ERROR, a timeout) ends
the conversation there: the turns after it are not played, since the user would answer a reply
that never came; the turns before it are kept. A stop of the run abandons the whole case
(`interrupted`: not recorded, `--resume` plays it again from its first turn).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from traceladder.suite.cases.model import Case, Turn

if TYPE_CHECKING:  # the loop imports this module
    from traceladder.produce.agent.loop import AgentOutcome

PlayTurn = Callable[[int, Turn], "AgentOutcome"]


def conversation_id(run_id: str, case: Case, repeat: int) -> str:
    """The `gen_ai.conversation.id` of one case run: `RUN/CASE/REPEAT/ATTEMPT` (a fresh token per
    attempt). A stopped attempt's traces stay in the store unjudged, and must not join the
    conversation `--resume` plays again — for a single-turn case too: killed mid-case, its partial
    trace and the resumed one would otherwise be one two-trace conversation, judged NOT_EVALUATED
    for the turn no case run owns."""
    return f"{run_id}/{case.id}/{repeat}/{secrets.token_hex(4)}"


def play_turns(case: Case, play: PlayTurn) -> AgentOutcome:
    """Play `case.turns` in order with `play(index, turn)` until one ends in an error; the case's
    outcome (`combine`)."""
    played: list[AgentOutcome] = []
    for index, turn in enumerate(case.turns):
        outcome = play(index, turn)
        played.append(outcome)
        if outcome.status == "error":
            break
    return combine(played)


def play_goal(max_turns: int, play: Callable[[int], AgentOutcome], ended: Callable[[], bool]) -> AgentOutcome:
    """Play a goal case's turns (`produce.agent.user_sim`): turn after turn with `play(index)` until one
    ends in an error, the user says it is done (`ended()`), or `max_turns` were played."""
    played: list[AgentOutcome] = []
    for index in range(max_turns):
        outcome = play(index)
        played.append(outcome)
        if outcome.status == "error" or ended():
            break
    return combine(played)


def combine(turns: list[AgentOutcome]) -> AgentOutcome:
    """One outcome for a conversation: the last played turn's trace, status, error and answer
    (the turn that ended it), steps, tokens and latency summed, every turn's outcome kept."""
    return replace(
        turns[-1], steps=sum(t.steps for t in turns), input_tokens=sum(t.input_tokens for t in turns),
        output_tokens=sum(t.output_tokens for t in turns), latency_ms=sum(t.latency_ms for t in turns),
        turns=tuple(turns),
    )  # fmt: skip
