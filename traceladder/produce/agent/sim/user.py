"""`sim:user`: the built-in simulated user, deterministic and needing no key.

It plays a goal case's user the simplest way that still exercises a conversation: it opens with
the goal's instructions, answers an agent's question (an answer ending in `?`) with a
confirmation, and says it is done (`user_sim.STOP_TOKEN`) after any other answer. Against
`sim:oracle`, which answers the instructions with the goal's golden calls, the goal is met in the
first turn; against an agent that never acts, the conversation ends without the goal's calls.
"""

from __future__ import annotations

from collections.abc import Sequence

SIM_USER = "sim:user"
CONFIRMATION = "Yes, please go ahead."


def sim_user_reply(instructions: str, transcript: Sequence[tuple[str, str]], stop_token: str) -> str:
    """The next message of `sim:user` after `transcript` ((speaker, text) pairs, `user` and
    `agent`, oldest first): the instructions to open, then a confirmation or the stop token."""
    if not transcript:
        return instructions
    speaker, text = transcript[-1]
    if speaker == "agent" and text.rstrip().endswith("?"):
        return CONFIRMATION
    return stop_token
