"""A toy rung, as a plug-in would add one: one module, registered by an entry point. It needs no
input but the calls, so it judges every trace; its results reach SQL with no storage change."""

from __future__ import annotations

from traceladder.plugin_api.rungs import Finding, RungResult, TraceInputs

NUMBER = 3
NAME = "step_budget"
NEEDS: frozenset[str] = frozenset()
SURVIVORS_ONLY = False
BUDGET = 1


def evaluate(inputs: TraceInputs, analysis: object) -> RungResult:
    used = len(inputs.calls)
    if used <= BUDGET:
        return RungResult(
            NUMBER, NAME, "pass", {"calls": float(used)}, explanation=f"{used} call(s) within {BUDGET}"
        )
    message = f"{used} tool calls exceed the budget of {BUDGET}"
    finding = Finding(NUMBER, "STEP_BUDGET", message, expected=BUDGET, actual=used)
    return RungResult(NUMBER, NAME, "fail", {"calls": float(used)}, (), (finding,), message)
