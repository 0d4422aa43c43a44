"""The deduplicated call being built, the assistant turns calls are grouped in, and the sort key.

Sort key (docs/conventions.md, "Order"): `(anchor_ns, anchor, phase, position, found_on, index)`.
A call requested by a response is anchored at that response (its start, its span id) in phase 1,
then ordered by its index in the response. A call seen only in history is anchored at the
response that followed it in that history, in phase 0 (just before that response's own calls),
then by its turn's position in the history. A call seen only as a tool span is anchored at the
tool span itself (phase 1). Every component is a value of the trace, never input order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from traceladder.extract.conventions.attribute_values import canonical
from traceladder.extract.conventions.sightings import Execution, LLMSpan, Sighting, Turn

SortKey = tuple[int, str, int, int, str, int]
PHASE_HISTORY = 0  # a history-only turn, placed before the response that followed it
PHASE_RESPONSE = 1  # a response's own calls; a tool-span-only call


@dataclass(slots=True)
class Call:
    key: SortKey
    sightings: list[tuple[int, Sighting]]  # (views.ORIGIN_RANK, sighting); [0] founded the call
    response: LLMSpan | None = None  # the emitting response
    turn: int | None = None
    call_index: int | None = None
    execution: Execution | None = None
    history_result: str | None = None  # first tool message found answering it
    found_on: str | None = None  # for a history-only call: the span whose input showed it
    _canon: tuple[str | None] | None = None

    @property
    def name(self) -> str | None:
        first = self.sightings[0][1].name  # the founding sighting nearly always has it
        if first is not None:
            return first
        return next((s.name for _, s in self.sightings if s.name is not None), None)

    @property
    def call_id(self) -> str | None:
        first = self.sightings[0][1].call_id
        if first is not None:
            return first
        return next((s.call_id for _, s in self.sightings if s.call_id is not None), None)

    def canonical_args(self) -> str | None:
        """Comparison key of the founding sighting's arguments (cached; parsing is the cost)."""
        if self._canon is None:
            self._canon = (canonical(self.sightings[0][1].args),)
        return self._canon[0]

    def best_result(self) -> str | None:
        if self.execution is not None and self.execution.result is not None:
            return self.execution.result
        return self.history_result


@dataclass(slots=True)
class Slot:
    """One assistant turn's calls: a response's (real) or a turn only history showed (virtual)."""

    key: SortKey
    calls: list[Call]
    virtual: bool
    seen: bool = False  # bound by a parsed history
    anchor: tuple[int, str] = field(default=(0, ""))

    def compatible(self, turn: Turn) -> bool:
        """The same calls in the same order: per call equal names, then equal ids when both
        sides have one, else equal arguments (compared parsed, so text matches its object)."""
        if len(turn.calls) != len(self.calls):
            return False
        for seen, call in zip(turn.calls, self.calls, strict=True):
            name = call.name
            if seen.name is not None and name is not None and seen.name != name:
                return False
            call_id = call.call_id
            if seen.call_id is not None and call_id is not None:
                if seen.call_id != call_id:
                    return False
                continue
            mine, theirs = call.canonical_args(), canonical(seen.args)
            if mine is not None and theirs is not None and mine != theirs:
                return False
        return True
