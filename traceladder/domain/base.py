"""The replaceable domain interface: everything the runner, store and judge need from a product.

A `Domain` supplies tool schemas (OpenAI function-tool format), which tools are read-only and which
are confirmations, the default extra-read whitelist, the fixture-backed ID fields with their valid
values, a system prompt and a sandbox factory. Retail is one implementation; another product's tools
replace it without touching the runner, store or judge.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol


@dataclass(frozen=True)
class ToolOutcome:
    """What one tool execution returned to the model.

    `ok` is False for every failure (unknown tool or ID, bad arguments, a business precondition);
    `result` is then a structured error object `{"error": {"type": ..., "message": ...}}`.
    """

    ok: bool
    result: dict[str, Any]
    error_type: str | None = None

    @staticmethod
    def error(error_type: str, message: str) -> ToolOutcome:
        return ToolOutcome(False, {"error": {"type": error_type, "message": message}}, error_type)


@dataclass(frozen=True)
class LedgerEntry:
    """One pending action a request_* tool created, and how it ended."""

    action_id: str
    tool: str
    arguments: dict[str, Any]
    status: str  # requested | confirmed | aborted


class Sandbox(Protocol):
    """A dry-run executor. Never raises: every failure is a `ToolOutcome` with ok=False."""

    def execute(self, tool: str, arguments: Any) -> ToolOutcome: ...

    def ledger(self) -> tuple[LedgerEntry, ...]: ...


@dataclass(frozen=True)
class Domain:
    """A product's tools and data, as the rest of traceladder sees them."""

    name: str
    tools: tuple[dict[str, Any], ...]
    read_only_tools: frozenset[str]
    confirmation_tools: frozenset[str]
    default_whitelist: tuple[str, ...]
    id_fields: Mapping[str, frozenset[str]]
    system_prompt: str
    sandbox_factory: Callable[[], Sandbox]
    # Raw bytes of every input file (schemas, fixtures, policy, prompt), hashed into run identity.
    input_files: Mapping[str, bytes] = field(default_factory=dict)

    @property
    def tool_names(self) -> tuple[str, ...]:
        return tuple(t["function"]["name"] for t in self.tools)

    def tool_schema(self, name: str) -> dict[str, Any] | None:
        """The JSON Schema of a tool's parameters, or None for an unknown tool."""
        return self._schemas.get(name)

    @cached_property
    def _schemas(self) -> dict[str, dict[str, Any]]:
        return {t["function"]["name"]: t["function"]["parameters"] for t in self.tools}

    def is_mutation(self, name: str) -> bool:
        return name in self.tool_names and name not in self.read_only_tools

    def new_sandbox(self) -> Sandbox:
        return self.sandbox_factory()
