"""The verdict of a conversation, folded from its turns' verdicts and its own findings. Pure.

A conversation is several turns, each its own trace with its own verdict (per-turn rules judged on
the turn's own calls), plus the conversation-scope checks that look across turns (a request in one
turn confirmed in a later one, a forbidden tool, a step budget for the whole dialogue). The fold:

1. no turns → NOT_EVALUATED ("no turns"): nothing was there to judge;
2. a conversation finding or a FAIL turn → FAIL, decided by the earliest turn that failed — a
   finding without a turn (a check over the whole dialogue) counts as decided at the last turn;
3. else an AGENT_ERROR turn → AGENT_ERROR, decided by the earliest such turn;
4. else a NOT_EVALUATED turn → NOT_EVALUATED, decided by the earliest: a conversation one of whose
   turns could not be judged is not a pass (never a silent wrong answer);
5. else every turn SKIP → SKIP;
6. else PASS (SKIP turns among passing ones are counted, not rated), with no deciding turn.

`deciding_turn` is the 0-based index of the turn that decided the verdict (None for a PASS, where
no single turn decides, and for a conversation with no turns). The `reason` line counts turns from
1, as a person reads them and as reports name them (`CASE turn 2` is `deciding_turn` 1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from traceladder.evaluate.rungs.types import VerdictValue


class ConversationFinding(NamedTuple):
    """One conversation-scope finding: `turn` is the 0-based turn whose call raised it (None for a
    check over the whole dialogue, e.g. a request never confirmed by the end), `finding_class` its
    class (e.g. UNCONFIRMED_ACTION), `message` one readable line, `rule` the policy rule behind it."""

    turn: int | None
    finding_class: str
    message: str
    rule: str | None = None


@dataclass(frozen=True)
class ConversationVerdict:
    """A conversation's verdict, the turn that decided it and why, in one readable line."""

    verdict: VerdictValue
    deciding_turn: int | None
    reason: str


def conversation_verdict(
    turn_verdicts: Sequence[str], findings: Sequence[ConversationFinding]
) -> ConversationVerdict:
    """Fold turn verdicts (in turn order, each one of `VerdictValue`'s words) and conversation
    findings into the conversation's verdict (rules in the module docstring).

    Raises ValueError for a word that is not a verdict or a finding whose turn is not a turn of
    this conversation: both are a caller's bug, never a verdict to guess."""
    verdicts = [_verdict(v) for v in turn_verdicts]
    for finding in findings:
        if finding.turn is not None and not 0 <= finding.turn < len(verdicts):
            raise ValueError(
                f"finding {finding.finding_class} names turn {finding.turn}, "
                f"but the conversation has {len(verdicts)} turns"
            )
    if not verdicts:
        return ConversationVerdict(VerdictValue.NOT_EVALUATED, None, "no turns")
    last = len(verdicts) - 1
    failing = [(f.turn if f.turn is not None else last, f.finding_class, f.message) for f in findings]
    failing += [(i, "turn", "") for i, v in enumerate(verdicts) if v is VerdictValue.FAIL]
    if failing:
        # Earliest turn first; at one turn, a conversation finding (which says why) before the bare
        # "turn failed" — sorting on a key that is stable for equal turns keeps findings' order.
        turn, kind, message = min(failing, key=lambda f: (f[0], f[1] == "turn"))
        if kind == "turn":
            return ConversationVerdict(VerdictValue.FAIL, turn, f"turn {turn + 1} failed")
        return ConversationVerdict(VerdictValue.FAIL, turn, f"{kind} at turn {turn + 1}: {message}")
    for word, says in (
        (VerdictValue.AGENT_ERROR, "had an agent error"),
        (VerdictValue.NOT_EVALUATED, "was not evaluated"),
    ):
        if word in verdicts:
            turn = verdicts.index(word)
            return ConversationVerdict(word, turn, f"turn {turn + 1} {says}")
    if all(v is VerdictValue.SKIP for v in verdicts):
        return ConversationVerdict(VerdictValue.SKIP, None, f"all {len(verdicts)} turns skipped")
    passed = sum(v is VerdictValue.PASS for v in verdicts)
    return ConversationVerdict(VerdictValue.PASS, None, f"{passed} of {len(verdicts)} turns passed")


def _verdict(word: str) -> VerdictValue:
    try:
        return VerdictValue(word)
    except ValueError:
        raise ValueError(f"not a verdict: {word!r} (one of {', '.join(VerdictValue)})") from None
