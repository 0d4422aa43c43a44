"""A sandbox whose named tools fail once, the way a real tool times out: the call is right, the
action never happens, and the model is told so. The simulator's `lost_confirm` fault uses it to
produce a trace every call-level rung passes and only the end state gives away."""

from __future__ import annotations

from typing import Any

from traceladder.suite.domain.base import LedgerEntry, Sandbox, ToolOutcome


class FailingOnce:
    def __init__(self, inner: Sandbox, tools: frozenset[str]) -> None:
        self.inner = inner
        self.pending = set(tools)  # tools whose next execution fails

    def execute(self, tool: str, arguments: Any) -> ToolOutcome:
        if tool in self.pending:
            self.pending.discard(tool)
            return ToolOutcome.error("timeout", f"{tool} did not answer within 30 s (simulated tool failure)")
        return self.inner.execute(tool, arguments)

    def ledger(self) -> tuple[LedgerEntry, ...]:
        return self.inner.ledger()
