"""Rung 4 (after partial credit) — state: did the agent's calls leave the world as the golden path
would have?

Call matching judges what the agent *asked*; this rung judges what *happened*. The expected end
state is the sandbox's action ledger after replaying the case's golden calls on a fresh sandbox
(done once per case, where the domain is loaded); the actual one is the ledger the agent loop
recorded on the trace's root span when the case ended. Actions pair in creation order per tool; a
missing, extra or differently resolved action, or an argument that differs under the case's own
parameter rules, is a `STATE_MISMATCH` naming the action and the field. It catches what call
matching cannot see: a correct confirm that failed at execution (the action was never confirmed),
a request confirmed twice, a confirm for the wrong action.

Needs a case and a recorded ledger: traces from elsewhere have no sandbox, so the rung is
`not_evaluated` for them, with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from traceladder.evaluate.rungs.analysis import Analysis
from traceladder.evaluate.rungs.compare import compare
from traceladder.evaluate.rungs.inputs import TraceInputs
from traceladder.evaluate.rungs.types import Finding, RungResult

NUMBER = 4
NAME = "state"
NEEDS = frozenset({"case", "state"})
SURVIVORS_ONLY = False
CODE = "STATE_MISMATCH"


class Action(NamedTuple):
    """One ledger entry as the rung sees it: plain data, hashable through its JSON text."""

    action_id: str
    tool: str
    arguments: Any
    status: str  # requested | confirmed | aborted


class StateEvidence(NamedTuple):
    """The two end states and the parameter rules of each request tool (from the case)."""

    expected: tuple[Action, ...]
    actual: tuple[Action, ...]
    rules: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()  # tool → ((param, rule), ...)


def _rules_for(evidence: StateEvidence, tool: str) -> Mapping[str, str]:
    return dict(next((r for t, r in evidence.rules if t == tool), ()))


def _differences(want: Action, got: Action, rules: Mapping[str, str]) -> list[Finding]:
    found = []
    where = f"{got.action_id} {got.tool}"
    if want.status != got.status:
        found.append(
            Finding(
                NUMBER,
                CODE,
                f"{where} ended {got.status}, expected {want.status}",
                got.tool,
                "status",
                want.status,
                got.status,
            )
        )
    expected_args = want.arguments if isinstance(want.arguments, dict) else {}
    actual_args = got.arguments if isinstance(got.arguments, dict) else {}
    for param in sorted(set(expected_args) | set(actual_args)):
        if param not in expected_args:
            message = f"{where}.{param} is {actual_args[param]!r}, which the golden path does not set"
            found.append(Finding(NUMBER, CODE, message, got.tool, param, None, actual_args[param]))
            continue
        rule = rules.get(param, "exact")
        equal, _ = compare(rule, expected_args[param], actual_args.get(param))
        if not equal:
            message = f"{where}.{param} is {actual_args.get(param)!r}, expected {expected_args[param]!r}"
            found.append(
                Finding(NUMBER, CODE, message, got.tool, param, expected_args[param], actual_args.get(param))
            )
    return found


def compare_states(evidence: StateEvidence) -> list[Finding]:
    """Every difference between the expected and the actual end state, in expected order."""
    unpaired = list(evidence.actual)
    findings: list[Finding] = []
    for want in evidence.expected:
        got = next((a for a in unpaired if a.tool == want.tool), None)
        if got is None:
            message = f"no {want.tool} action was {want.status}: the golden path leaves one"
            findings.append(Finding(NUMBER, CODE, message, want.tool, None, want.status, None))
            continue
        unpaired.remove(got)
        findings += _differences(want, got, _rules_for(evidence, want.tool))
    for extra in unpaired:
        message = f"{extra.action_id} {extra.tool} was {extra.status}: the golden path leaves no such action"
        findings.append(Finding(NUMBER, CODE, message, extra.tool, None, None, extra.status))
    return findings


def evaluate(inputs: TraceInputs, analysis: Analysis) -> RungResult:
    evidence = inputs.state
    assert evidence is not None  # NEEDS: the ladder runs this rung only with sandbox state
    findings = tuple(compare_states(evidence))
    if findings:
        return RungResult(
            NUMBER,
            NAME,
            "fail",
            {"state_match": 0.0},
            findings=findings,
            explanation=f"end state differs from the golden path's: {findings[0].message}",
        )
    n = len(evidence.expected)
    text = f"end state matches the golden path ({n} action{'s' if n != 1 else ''})"
    return RungResult(NUMBER, NAME, "pass", {"state_match": 1.0}, explanation=text)
