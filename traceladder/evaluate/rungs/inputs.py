"""The unit of judgement is a trace. Its inputs are all optional except the calls.

`TraceInputs` carries what a trace offers the ladder: its tool calls always; a reference (a case)
when it came from a suite; tool schemas (a domain's, or — for traces from elsewhere — the
definitions the trace itself captured); the domain's rules for reads, whitelists, fixture IDs and
chains; later an invariant policy and a judge. A rung whose inputs are absent is reported
`not_evaluated` with the reason in `absent`, never a pass; a trace whose calls could not all be
read (`unread`) is `not_evaluated` on every rung, never judged on the part that was read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from traceladder.evaluate.rungs.types import Call
from traceladder.suite.cases.model import Case
from traceladder.trace_facts import TraceFacts

if TYPE_CHECKING:
    from traceladder.evaluate.rungs.judge import Judgment
    from traceladder.evaluate.rungs.policy import Policy
    from traceladder.evaluate.rungs.schema import SchemaRegistry
    from traceladder.evaluate.rungs.state import StateEvidence
    from traceladder.suite.domain.base import Domain

# Why an input is missing when the assembler did not say (rung explanations quote it).
DEFAULT_REASONS = {
    "case": "the trace carries no traceladder.case.id, so there is no expected path",
    "tools": "no tool definitions in the trace and no --domain or --tools given",
    "rules": "no domain rules for this trace",
    "policy": "no invariant policy for this trace's service",
    "judge": "no judge configured (--judge-model)",
    "state": "a trace from elsewhere has no sandbox state to compare (it names no case)",
}


@dataclass(frozen=True)
class DomainRules:
    """The parts of a domain the reference rungs need, as plain picklable data."""

    domain: str
    read_only: frozenset[str]
    default_whitelist: tuple[str, ...]
    id_fields: Mapping[str, frozenset[str]]
    requests: frozenset[str] = frozenset()
    confirmations: frozenset[str] = frozenset()
    link: str = "action_id"
    whole_arguments: bool = False  # see Domain.whole_arguments

    @staticmethod
    def of(domain: Domain) -> DomainRules:
        return DomainRules(
            domain.name, domain.read_only_tools, domain.default_whitelist, domain.id_fields,
            domain.chains.requests, domain.chains.confirmations, domain.chains.link, domain.whole_arguments,
        )  # fmt: skip

    def has_unknown_id(self, value: Any) -> bool:
        """Whether any fixture-backed ID at any depth does not exist (stops at the first)."""
        id_fields = self.id_fields
        stack = [value]
        while stack:
            item = stack.pop()
            if isinstance(item, dict):
                for key, child in item.items():
                    valid = id_fields.get(key)
                    if valid is not None and isinstance(child, str | int):
                        if child not in valid:
                            return True
                    elif isinstance(child, dict | list):
                        stack.append(child)
            elif isinstance(item, list):
                stack.extend(child for child in item if isinstance(child, dict | list))
        return False


_NO_FACTS = TraceFacts()


@dataclass(frozen=True, init=False)
class TraceInputs:
    """One trace's inputs (a frozen dataclass whose `__init__` sets its fields as one dict, as
    `types.RungResult` does: one is made per distinct trace)."""

    trace_id: str
    calls: tuple[Call, ...]
    case: Case | None = None
    tools: SchemaRegistry | None = None
    rules: DomainRules | None = None
    policy: Policy | None = None
    judge: Judgment | None = None
    state: StateEvidence | None = None
    agent_error: str | None = None  # set: the run produced no normally scored result
    facts: TraceFacts = _NO_FACTS
    absent: Mapping[str, str] = field(default_factory=dict)  # input → why it is missing
    # set: the calls are not the trace's whole story (tool activity in a shape no convention read,
    # fewer calls than tools executed); every rung is then `not_evaluated` with this reason
    unread: str | None = None

    def __init__(
        self, trace_id: str, calls: tuple[Call, ...], case: Case | None = None,
        tools: SchemaRegistry | None = None, rules: DomainRules | None = None, policy: Policy | None = None,
        judge: Judgment | None = None, state: StateEvidence | None = None, agent_error: str | None = None,
        facts: TraceFacts = _NO_FACTS, absent: Mapping[str, str] | None = None, unread: str | None = None,
    ) -> None:  # fmt: skip
        object.__setattr__(self, "__dict__", {
            "trace_id": trace_id, "calls": calls, "case": case, "tools": tools, "rules": rules,
            "policy": policy, "judge": judge, "state": state, "agent_error": agent_error, "facts": facts,
            "absent": {} if absent is None else absent, "unread": unread,
        })  # fmt: skip

    def has(self, name: str) -> bool:
        return getattr(self, name, None) is not None

    def why_absent(self, name: str) -> str:
        return self.absent.get(name) or DEFAULT_REASONS.get(name, f"no {name}")
