"""The domain plug-in interface: everything the runner, simulator, store and ladder need from a
product's tools, so another product replaces retail without touching any of them.

A `Domain` supplies its tool schemas (OpenAI function-tool format), which tools only read, how a
mutation is requested and confirmed (`ChainSpec`), the default extra-read whitelist, the
fixture-backed ID fields with their valid values, a system prompt, a sandbox factory, its case
suite (`SuiteSpec` + file), and the hints the simulated model needs to invent labelled faults.
Domains other than the built-in retail register through the `traceladder.domains` entry-point
group (docs/extending.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from traceladder.suite.cases.spec import SuiteSpec

if TYPE_CHECKING:
    from traceladder.evaluate.rungs.untrusted_schema import SchemaValidator


def compile_validator(schema: Mapping[str, Any], *, trusted: bool = True) -> SchemaValidator:
    """A tool schema's validator, compiled by the one owner of that (`untrusted_schema.compile_schema`);
    run it with `schema_errors`. Compile once, reuse."""
    # here: naming a domain must not import the validator
    from traceladder.evaluate.rungs.untrusted_schema import compile_schema

    return compile_schema(schema, trusted=trusted)


@dataclass(frozen=True)
class ToolOutcome:
    """What one tool execution returned to the model.

    `ok` is False for every failure (unknown tool or ID, bad arguments, a business precondition);
    `result` is then a structured error object `{"error": {"type": ..., "message": ...}}`.
    """

    ok: bool
    result: dict[str, Any]
    error_type: str | None = None
    # The exact text the model is shown, when it is not `result` as JSON: a replayed recording
    # returns what the tool returned then, byte for byte, even when that was not a JSON object.
    text: str | None = None

    @staticmethod
    def error(error_type: str, message: str) -> ToolOutcome:
        return ToolOutcome(False, {"error": {"type": error_type, "message": message}}, error_type)


@dataclass(frozen=True)
class LedgerEntry:
    """One pending action a request tool created, and how it ended."""

    action_id: str
    tool: str
    arguments: dict[str, Any]
    status: str  # requested | confirmed | aborted


class Sandbox(Protocol):
    """A dry-run executor. Never raises: every failure is a `ToolOutcome` with ok=False."""

    def execute(self, tool: str, arguments: Any) -> ToolOutcome: ...

    def ledger(self) -> tuple[LedgerEntry, ...]: ...


@dataclass(frozen=True)
class ChainSpec:
    """Request → confirm chains: a request tool returns `link` (e.g. `action_id`) in its result,
    and a confirmation tool must carry the value its request returned, later in the trace."""

    requests: frozenset[str] = frozenset()
    confirmations: frozenset[str] = frozenset()
    link: str = "action_id"


@dataclass(frozen=True)
class SimHints:
    """What the simulated model needs to inject labelled faults into this domain's cases. Every
    hint is optional: a fault whose hint is missing is simply never chosen.

    - `hallucinated`: per fixture-backed ID field, a well-formed value that exists nowhere.
    - `other_value(param, value)`: a different schema-valid value for a golden parameter, or None.
    - `sibling(tool, arguments)`: a plausible but wrong existing tool call `(tool, arguments)` that
      is never an ignorable whitelisted read, or None.
    - `extra_reads`: harmless reads `tool -> arguments` a case may make without failing.
    - `extra_mutation`: a mutation `(tool, arguments)` no case asks for.
    - `answer`, `answer_faults`: grounded final answers, and which facts can be misstated (the
      faults only the judge can catch).
    """

    hallucinated: Mapping[str, Any] = field(default_factory=dict)
    other_value: Callable[[str, Any], Any] | None = None
    sibling: Callable[[str, dict[str, Any]], tuple[str, dict[str, Any]] | None] | None = None
    extra_reads: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    extra_mutation: tuple[str, dict[str, Any]] | None = None
    answer_text: str = "Done."
    clarify_text: str = "Could you tell me more?"
    # `answer(results, fault)`: a final answer stating facts from the tool results (or None when
    # they hold none worth stating); with `fault` ("amount" | "status") one fact is misstated.
    answer: Callable[[list[dict[str, Any]], str | None], str | None] | None = None
    # Answer fault → the golden tools whose results hold such a fact (a fault is chosen only then).
    answer_faults: Mapping[str, frozenset[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class Domain:
    """A product's tools and data, as the rest of traceladder sees them."""

    name: str
    tools: tuple[dict[str, Any], ...]
    read_only_tools: frozenset[str]
    default_whitelist: tuple[str, ...]
    id_fields: Mapping[str, frozenset[str]]
    system_prompt: str
    sandbox_factory: Callable[[], Sandbox]
    chains: ChainSpec = field(default_factory=ChainSpec)
    suite: SuiteSpec | None = None
    suite_path: Path | None = None  # the shipped case suite (JSONL)
    simulation: SimHints = field(default_factory=SimHints)
    # Raw bytes of every input file (schemas, fixtures, policy, prompt), hashed into run identity.
    input_files: Mapping[str, bytes] = field(default_factory=dict)
    # Rebuilding from edited data files (`domain validate --data-dir`), and checks beyond the
    # generic tool/whitelist contract (e.g. fixture referential integrity).
    from_files: Callable[[Mapping[str, bytes]], Domain] | None = None
    extra_checks: Callable[[Domain], list[str]] | None = None
    # The policy the judge holds answers to (rung 5's policy criterion); None: the system prompt.
    policy_text: str | None = None
    # Whether `domain validate` holds the schemas to OpenAI strict mode (closed objects, required
    # lists, descriptions). A domain recorded from someone's traces keeps the definitions their
    # agent really sent, strict or not; they must still be valid JSON Schema.
    strict_schemas: bool = True
    # Whether a golden call without parameter rules compares the whole argument object (an
    # argument it does not name is a difference, seed 2's exact match) instead of only the keys it
    # names. A suite recorded from traces says "these arguments, as sent": a declarative domain
    # chooses with `compare = "whole"` in domain.toml.
    whole_arguments: bool = False
    # Whether the tool schemas are ours (shipped, or an installed plug-in's code): a directory's
    # are data someone else wrote, compiled as untrusted (`untrusted_schema`: RE2, no fast path).
    trusted: bool = True

    @property
    def judge_policy(self) -> str:
        return self.policy_text or self.system_prompt

    @property
    def tool_names(self) -> tuple[str, ...]:
        return tuple(t["function"]["name"] for t in self.tools)

    def tool_schema(self, name: str) -> dict[str, Any] | None:
        """The JSON Schema of a tool's parameters, or None for an unknown tool."""
        return self.tool_schemas.get(name)

    @cached_property
    def tool_schemas(self) -> dict[str, dict[str, Any]]:
        return {t["function"]["name"]: t["function"]["parameters"] for t in self.tools}

    @cached_property
    def validators(self) -> dict[str, SchemaValidator]:
        """Compiled once per domain, shared by the sandbox and the case validator."""
        return {name: compile_validator(s, trusted=self.trusted) for name, s in self.tool_schemas.items()}

    def new_sandbox(self) -> Sandbox:
        return self.sandbox_factory()
