"""Judging a goal case's conversation against its goal (docs/conversations.md, "A simulated
user"). A goal case's turns have no golden calls of their own — the simulated user decides what
each turn asks — so each turn is judged on its own calls without a reference (schemas, rules,
policy), and the conversation's calls, every turn's in turn order, are judged once as the goal
case's: by the ladder's own rungs, as if they were one trace of that case. A conversation that
ended without the goal's expected calls (or with calls the goal does not allow) gets one
`GOAL_NOT_MET` finding, which fails it, saying what was missing."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from traceladder.evaluate.assemble import Context, DomainContext
from traceladder.evaluate.conversation_verdict import ConversationFinding
from traceladder.evaluate.rungs.inputs import TraceInputs
from traceladder.evaluate.rungs.types import Call, VerdictValue
from traceladder.suite.cases.model import Case

GOAL_NOT_MET = "GOAL_NOT_MET"


@dataclass(frozen=True)
class Goals:
    """The goal cases an evaluation knows (its context's suites), by (domain, case id)."""

    ctx: Context

    def known(self, domain: str | None, case_id: str) -> bool:
        return self._case(domain, case_id) is not None

    def _case(self, domain: str | None, case_id: str) -> tuple[Case, DomainContext] | None:
        d = self.ctx.domains.get(domain or self.ctx.default_domain)
        case = d.cases.get(case_id) if d is not None else None
        return (case, d) if case is not None and case.goal is not None and d is not None else None

    def findings(
        self, conversation_id: str, domain: str | None, case_id: str, turns: Sequence[Sequence[Call]]
    ) -> list[ConversationFinding]:
        """`GOAL_NOT_MET` (decided at the last turn) when the conversation's calls, in turn order,
        fail the goal case's golden path; nothing when they meet it or the case is unknown."""
        found = self._case(domain, case_id)
        if found is None:
            return []
        case, d = found
        calls = tuple(c._replace(ordinal=i) for i, c in enumerate((c for t in turns for c in t), 1))
        inputs = TraceInputs(conversation_id, calls, case, d.tools, d.rules)
        verdict = self.ctx.ladder.settle(inputs)
        if verdict.verdict is not VerdictValue.FAIL:
            return []
        why = verdict.explanation or "the goal's calls were not made"
        return [
            ConversationFinding(
                len(turns) - 1,
                GOAL_NOT_MET,
                f"the conversation ended after {len(turns)} turn(s) without the goal's expected calls: {why}",
                case_id,
            )
        ]
