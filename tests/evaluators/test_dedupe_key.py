"""Traces with identical inputs share one verdict; the key that decides "identical" is derived from
what the ladder's rungs read, so an input a rung needs can never be left out of it."""

from __future__ import annotations

from dataclasses import fields, replace

from traceladder.evaluate.assemble import INPUT_KEYS, NOT_INPUTS, build_context, dedupe_key, dedupe_parts
from traceladder.evaluate.rungs import state
from traceladder.evaluate.rungs.inputs import TraceInputs
from traceladder.evaluate.rungs.ladder import BUILTIN, Ladder
from traceladder.store.readers import UnitRow

UNIT = UnitRow("a" * 32, "run", "fc-d1-001", 0, "retail", "ok", None, ledger="[]")
CALLS = (("get_order", '{"order_id": "W441"}', True, None, 1),)


def key(unit: UnitRow, ladder: Ladder) -> tuple[object, ...]:
    ctx = build_context([unit], ladder)
    return dedupe_key(unit, CALLS, ctx, dedupe_parts(ctx.ladder))


def test_every_input_of_the_ladder_has_a_part_in_the_key():
    inputs = {f.name for f in fields(TraceInputs)} - NOT_INPUTS
    assert inputs == set(INPUT_KEYS)


def test_an_input_changes_the_key_exactly_when_a_rung_needs_it():
    other = replace(UNIT, trace_id="b" * 32, ledger='[{"action_id": "ACT-001"}]')
    without_state = Ladder(tuple(r for r in BUILTIN if r is not state))
    # no rung reads the ledger: the two traces are one judgement …
    assert key(UNIT, without_state) == key(other, without_state)
    # … and once a rung needs the state, the ledger it is built from is part of the key.
    assert key(UNIT, Ladder(BUILTIN)) != key(other, Ladder(BUILTIN))


class NeedsState:
    """A plug-in rung (the real protocol) that needs an input no built-in rung of its ladder does."""

    NUMBER, NAME, NEEDS, SURVIVORS_ONLY = 4, "needs_state", frozenset({"state"}), False

    @staticmethod
    def evaluate(inputs, analysis):  # pragma: no cover - the key is computed before any rung runs
        raise AssertionError("not called")


def test_a_plug_in_rungs_new_need_joins_the_key():
    other = replace(UNIT, trace_id="b" * 32, ledger='[{"action_id": "ACT-001"}]')
    ladder = Ladder(tuple(r for r in BUILTIN if r is not state)).with_rungs([NeedsState()])
    assert key(UNIT, ladder) != key(other, ladder)


def test_a_need_that_is_no_input_adds_nothing():
    # an input the assembler never builds is absent for every trace alike: nothing to tell apart
    class NeedsNothingKnown(NeedsState):
        NAME, NEEDS = "needs_unknown", frozenset({"no_such_input"})

    ladder = Ladder(BUILTIN).with_rungs([NeedsNothingKnown()])
    assert dedupe_parts(ladder) == dedupe_parts(Ladder(BUILTIN))
