"""The state rung's inputs: the end state each case's golden path leaves, and the one a trace
recorded.

The expected state comes from executing the golden calls on a fresh sandbox of the case's domain
— once per case, where the domain is loaded, so worker processes receive plain data. A chain's
link parameter (e.g. `action_id`, whose golden rule is `any`) takes the value the previous
request returned, exactly as an agent must.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from traceladder.evaluate.rungs.state import Action, StateEvidence
from traceladder.suite.cases.model import Case, turn_key
from traceladder.suite.domain.base import Domain, LedgerEntry

NO_LEDGER = (
    "the trace recorded no sandbox ledger (traceladder.sandbox.ledger on its root span): "
    "a run of traceladder before 0.4, or a case-tagged trace from another agent"
)


def _action(entry: LedgerEntry) -> Action:
    return Action(entry.action_id, entry.tool, entry.arguments, entry.status)


def golden_state(case: Case, domain: Domain) -> StateEvidence:
    """Replay the golden calls; the expected ledger and each request tool's parameter rules."""
    sandbox = domain.new_sandbox()
    link = domain.chains.link
    latest: Any = None
    for call in case.calls:
        arguments = dict(call.params)
        if call.rule(link) == "any" and latest is not None:
            arguments[link] = latest
        outcome = sandbox.execute(call.tool, arguments)
        if outcome.ok and isinstance(outcome.result.get(link), str):
            latest = outcome.result[link]
    rules = tuple(
        (c.tool, tuple(sorted(c.param_rules.items()))) for c in case.calls if c.tool in domain.chains.requests
    )
    return StateEvidence(tuple(_action(e) for e in sandbox.ledger()), (), rules)


def golden_states(cases: Iterable[Case], domain: Domain) -> dict[str, StateEvidence]:
    """Each case's golden end state by `turn_key`: a multi-turn case has one per turn, the state
    its turns so far leave (a turn's trace records the sandbox as that turn left it)."""
    out: dict[str, StateEvidence] = {}
    for c in cases:
        if c.skip:
            continue
        if c.multi_turn:
            for index in range(len(c.turns)):
                out[turn_key(c.id, index)] = golden_state(c.through_turn(index), domain)
        else:
            out[c.id] = golden_state(c, domain)
    return out


def recorded_state(ledger: str) -> tuple[Action, ...] | str:
    """The actions a trace recorded, or why they cannot be read."""
    try:
        entries = json.loads(ledger)
        return tuple(
            Action(str(e["action_id"]), str(e["tool"]), e.get("arguments"), str(e["status"])) for e in entries
        )
    except (ValueError, TypeError, KeyError, AttributeError):
        return "the recorded sandbox ledger is not a JSON list of actions"


def state_evidence(
    case: Case | None,
    ledger: str | None,
    states: Mapping[str, StateEvidence],
    absent: dict[str, str],
    key: str | None = None,
) -> StateEvidence | None:
    """Both end states for a case-tagged trace with a ledger; otherwise None with the reason.
    `key` names the golden state (`turn_key`; default the case's id)."""
    if case is None:
        return None  # the reason is the case's: no case, no golden path
    golden = states.get(key or case.id)
    if golden is None:
        absent["state"] = f"no golden end state for case {case.id}"
        return None
    if ledger is None:
        absent["state"] = NO_LEDGER
        return None
    actual = recorded_state(ledger)
    if isinstance(actual, str):
        absent["state"] = actual
        return None
    return golden._replace(actual=actual)
