"""Binding requests' input histories to the calls responses made, and reading results from them.

Each history is matched turn by turn against the assistant turns known so far (responses, and
turns earlier histories showed on their own). An ordered history is aligned backwards from its
end, because its last turn is the response just before the request: each turn binds the latest
compatible turn before the one bound after it, so identical turns without ids bind in order. A
turn nothing matches is a call the trace has no response for: it becomes a history-only turn,
placed just before the response that followed it. Tool messages answer the call with their id,
or (no id) the next unanswered call of the latest turn.

Histories are the bulk of a trace's bytes, so they are read latest first and only when reading
can change the result (`Histories._needed`): a history repeats every turn before it, so once the
latest confirmed them earlier ones add nothing, and when tool spans already gave every result and
the history holds as many assistant messages as there were responses, it holds nothing new.
Unordered histories (log records with equal timestamps) are cheap and always read; their id-less
results are paired afterwards, in time order, when exactly one call is left to answer.
"""

from __future__ import annotations

import bisect
from collections import Counter
from dataclasses import dataclass

from traceladder.extract.conventions.calls import PHASE_HISTORY, PHASE_RESPONSE, Call, Slot, SortKey
from traceladder.extract.conventions.sightings import History, LLMSpan, Message, ToolResult, Turn
from traceladder.extract.conventions.views import ORIGIN_RANK

_HISTORY = ORIGIN_RANK["history"]


@dataclass(slots=True)
class BagLeftover:
    """An unordered history's calls and the results it could not attribute by id."""

    time: tuple[int, str]
    calls: list[Call]
    results: list[str | None]


class Histories:
    def __init__(self, slots: list[Slot], skip: bool) -> None:
        self.slots = slots  # sorted by key; grows with history-only turns
        self.skip = skip  # False when some tool span has no request yet: read every history
        self.leftovers: list[BagLeftover] = []
        self.history_only: list[Call] = []
        self.first_requests: set[str] = set()  # keys of the trace's first request (and its nested copies)
        self.made_before: set[int] = set()  # ids of the history-only calls the first request's input held

    def bind_all(self, llm_spans: list[LLMSpan]) -> None:
        """Ordered histories latest first (the latest usually confirms every turn, and places a
        history-only turn exactly); then bags earliest first, so a turn only bags show is
        anchored at the first request that showed it and later bags find it there."""
        first_turn = min((llm.turn for llm in llm_spans), default=0)
        self.first_requests = {llm.key for llm in llm_spans if llm.turn == first_turn}
        for llm in reversed(llm_spans):
            limit = self._limit(llm)
            ordered = [h for h in llm.histories if h.ordered]
            if len(ordered) > 1:  # the structured copy first: it costs no parse
                ordered.sort(key=lambda h: not h.cheap)
            for history in ordered:
                if self._needed(limit, llm, history) or (
                    llm.key in self.first_requests and _holds_turns(history)
                ):
                    self._bind_ordered(history.load(), llm, self._before(limit))
        for llm in llm_spans:
            for history in (h for h in llm.histories if not h.ordered):
                limit = self._limit(llm)
                self._bind_bag(history.load(), llm, self._before(limit))

    @staticmethod
    def _limit(llm: LLMSpan) -> SortKey:
        """Sorts after every turn before the request `llm` (history-only turns anchored at it
        included) and before its own response's calls."""
        return (*llm.anchor, PHASE_RESPONSE, -1, "", -1)

    def _before(self, limit: SortKey) -> list[Slot]:
        return self.slots[: bisect.bisect_left(self.slots, limit, key=lambda s: s.key)]

    def _needed(self, limit: SortKey, llm: LLMSpan, history: History) -> bool:
        """Whether reading this history can change the result: no when every response before it
        is already confirmed by a later history, or when all their calls have results from tool
        spans and its assistant messages are exactly as many as the responses before it (so none
        is missing). Counting needs no JSON parse."""
        if not self.skip:
            return True
        unconfirmed = [s for s in self.slots if s.key < limit and not s.seen and not s.virtual]
        if not unconfirmed:
            return False
        if any(call.best_result() is None for s in unconfirmed for call in s.calls):
            return True
        if history.assistant_turns is None or history.assistant_turns() != llm.turn - 1:
            return True
        for slot in unconfirmed:  # accounted for: earlier histories (subsets of this one) add nothing
            slot.seen = True
        return False

    def _virtual(self, turn: Turn, llm: LLMSpan, anchor: tuple[int, str], position: int) -> Slot:
        calls = [
            Call((anchor[0], anchor[1], PHASE_HISTORY, position, llm.key, j), [(_HISTORY, s)],
                 call_index=j, found_on=llm.span_id)
            for j, s in enumerate(turn.calls)
        ]  # fmt: skip
        slot = Slot((anchor[0], anchor[1], PHASE_HISTORY, position, llm.key, 0), calls, True, anchor=anchor)
        bisect.insort(self.slots, slot, key=lambda s: s.key)
        self.history_only.extend(calls)
        return slot

    @staticmethod
    def _see(slot: Slot, turn: Turn) -> None:
        """Marks the turn confirmed and keeps a history sighting only when it adds something:
        closer argument text, or the first log record the call was read from."""
        slot.seen = True
        for call, seen in zip(slot.calls, turn.calls, strict=True):
            best_rank = min(s.args_rank for _, s in call.sightings)
            has_record = any(s.record_id is not None for _, s in call.sightings)
            if seen.args_rank < best_rank or (seen.record_id is not None and not has_record):
                call.sightings.append((_HISTORY, seen))

    def _reanchor(self, slot: Slot, llm: LLMSpan, anchor: tuple[int, str], position: int) -> None:
        """Moves a history-only turn a later request showed to this earlier request, so it is
        anchored where it was first seen and counted once however many histories repeat it."""
        self.slots.remove(slot)
        slot.key = (anchor[0], anchor[1], PHASE_HISTORY, position, llm.key, 0)
        slot.anchor = anchor
        for j, call in enumerate(slot.calls):
            call.key = (anchor[0], anchor[1], PHASE_HISTORY, position, llm.key, j)
            call.found_on = llm.span_id
        bisect.insort(self.slots, slot, key=lambda s: s.key)

    def _later_virtual(
        self, unmatched: list[tuple[int, Turn, tuple[int, str]]], llm: LLMSpan
    ) -> dict[int, Slot]:
        """History-only turns of later requests that this earlier history shows too. A history
        repeats every turn before it, so this one's turns are a prefix of a later one's: match in
        order, earliest first, each turn once (calls without ids are told apart by position)."""
        later = [s for s in self.slots if s.virtual and s.anchor > llm.anchor]
        found: dict[int, Slot] = {}
        start = 0
        for position, turn, anchor in unmatched:
            hit = next((k for k in range(start, len(later)) if later[k].compatible(turn)), None)
            if hit is not None:
                found[position], start = later[hit], hit + 1
                self._reanchor(later[hit], llm, anchor, position)
        return found

    def _bind_ordered(self, messages: list[Message], llm: LLMSpan, before: list[Slot]) -> None:
        messages = _rejoined(messages, before)
        turns = [(i, m) for i, m in enumerate(messages) if isinstance(m, Turn)]
        bound: dict[int, Slot] = {}
        used: set[int] = set()
        unmatched: list[tuple[int, Turn, tuple[int, str]]] = []
        pointer, anchor = len(before) - 1, llm.anchor
        for position, turn in reversed(turns):
            hit = next((p for p in range(pointer, -1, -1) if before[p].compatible(turn)), None)
            if hit is not None:
                slot, pointer, anchor = before[hit], hit - 1, before[hit].anchor
            else:
                # out of order (a producer reordered its messages)? any unbound turn before it
                hit = next(
                    (
                        p
                        for p in range(len(before) - 1, -1, -1)
                        if p not in used and before[p].compatible(turn)
                    ),
                    None,
                )
                if hit is None:
                    unmatched.append((position, turn, anchor))
                    continue
                slot = before[hit]
            used.add(hit)
            self._see(slot, turn)
            bound[position] = slot
        unmatched.reverse()
        found = self._later_virtual(unmatched, llm)
        for position, turn, anchor in unmatched:
            slot = found.get(position) or self._virtual(turn, llm, anchor, position)
            self._see(slot, turn)
            bound[position] = slot
        self._mark_prior(llm, list(bound.values()))
        open_turns: list[list[Call]] = []
        for i, message in enumerate(messages):
            if isinstance(message, Turn):
                open_turns.append(list(bound[i].calls))
            elif isinstance(message, ToolResult) and not _answer(open_turns, message) and message.call_id:
                # answered before it was asked (messages out of order): the id still says whose
                for call in (
                    c for slot in bound.values() for c in slot.calls if c.call_id == message.call_id
                ):
                    if call.history_result is None:
                        _set_result(call, message.text)
                        break

    def _bind_bag(self, messages: list[Message], llm: LLMSpan, before: list[Slot]) -> None:
        used: set[int] = set()
        calls: list[Call] = []
        bound: list[Slot] = []
        anchor = llm.anchor
        for position, turn in enumerate(m for m in messages if isinstance(m, Turn)):
            hit = next(
                (p for p in range(len(before) - 1, -1, -1) if p not in used and before[p].compatible(turn)),
                None,
            )
            if hit is None:
                slot = self._virtual(turn, llm, anchor, position)
            else:
                used.add(hit)
                slot = before[hit]
            self._see(slot, turn)
            bound.append(slot)
            calls.extend(slot.calls)
        self._mark_prior(llm, bound)
        leftover = []
        for message in messages:
            if isinstance(message, ToolResult):
                answered = [c for c in calls if message.call_id is not None and c.call_id == message.call_id]
                if len(answered) == 1:
                    _set_result(answered[0], message.text)
                else:
                    leftover.append(message.text)
        if leftover:
            self.leftovers.append(BagLeftover(llm.anchor, calls, leftover))

    def prior(self) -> tuple[list[Call], list[Call]]:
        """The history-only calls split in two: those made in this trace, and those the input of
        its first request already held — made before the trace began (docs/conventions.md,
        "Calls made before the trace"), so never this trace's rows."""
        own = [c for c in self.history_only if id(c) not in self.made_before]
        before = [c for c in self.history_only if id(c) in self.made_before]
        return own, before

    def _mark_prior(self, llm: LLMSpan, slots: list[Slot]) -> None:
        """The virtual turns the first request's input showed were made before the trace."""
        if llm.key in self.first_requests:
            self.made_before.update(id(c) for slot in slots if slot.virtual for c in slot.calls)

    def pair_leftovers(self) -> None:
        """Id-less results of unordered histories, in time order: the known results of the
        history's calls account for some; if one result and one unanswered call remain, pair."""
        for bag in sorted(self.leftovers, key=lambda b: b.time):
            remaining = Counter(bag.results)
            unanswered = []
            for call in bag.calls:
                result = call.best_result()
                if result is not None and remaining[result] > 0:
                    remaining[result] -= 1
                elif result is None:
                    unanswered.append(call)
            left = [r for r, n in remaining.items() for _ in range(n)]
            if len(left) == 1 and len(unanswered) == 1:
                _set_result(unanswered[0], left[0])


def _holds_turns(history: History) -> bool:
    """Whether a history may hold an assistant turn (counted without a parse where it can be).
    The first request's history is read whenever it may: what it holds says which calls were made
    before the trace began, and those must not be counted as this trace's."""
    return history.assistant_turns is None or history.assistant_turns() > 0


def _rejoined(messages: list[Message], before: list[Slot]) -> list[Message]:
    """Consecutive assistant turns with no tool result between them, joined into one where they
    are one response written back as one message per call (the OpenAI Agents SDK on the Responses
    API lists each `function_call` item of a parallel pair as its own assistant message): only
    when the joined turn matches a response and its parts, on their own, do not all match one.
    (A producer whose tool messages are not read also shows consecutive turns: those stay apart.)"""
    out: list[Message] = []
    run: list[Turn] = []

    def flush() -> None:
        if len(run) > 1:
            joined = Turn(
                [c for t in run for c in t.calls], next((t.record_id for t in run if t.record_id), None)
            )
            alone = all(any(s.compatible(t) for s in before) for t in run)
            if not alone and any(s.compatible(joined) for s in before):
                out.append(joined)
                run.clear()
                return
        out.extend(run)
        run.clear()

    for message in messages:
        if isinstance(message, Turn):
            run.append(message)
        else:
            flush()
            out.append(message)
    flush()
    return out


def _set_result(call: Call, result: str | None) -> None:
    if call.history_result is None:
        call.history_result = result


def _answer(open_turns: list[list[Call]], message: ToolResult) -> bool:
    """A tool message answers the latest open call with its id; without an id, the first open
    call of the latest turn that still has one (OpenAI requires answers right after the turn)."""
    for calls in reversed(open_turns):
        for i, call in enumerate(calls):
            if message.call_id is None or call.call_id == message.call_id:
                _set_result(calls.pop(i), message.text)
                return True
    return False
