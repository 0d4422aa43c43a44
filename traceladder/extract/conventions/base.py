"""The convention protocol: everything traceladder knows about one way of writing tool calls into
spans, in one class. A convention is OTel GenAI, OpenInference or OpenLLMetry, or a framework's
own shapes on top of one of them (LangChain's `invalid_tool_calls`, an envelope around a tool's
arguments, Bedrock content blocks).

Every method is total and pure: it reads one span (or one span's attributes) and returns what it
finds, never raises on what a producer sent, and returns nothing when the span is not its own. The
extraction stage (`traceladder.extract`: `collect`, `merge`, the spans' derived columns, the
trace index's agent name) and the judge's exchange reader all ask the registry
(`extract.conventions.registry`), never a convention by name — so a new framework is one module and one
registration line.

How a span's role is decided: conventions are asked in `precedence` order, `role` first (a strong
signal: an explicit operation name, a span kind), then `fallback_role` (a weak one: an attribute
that only some producers set); the first answer wins. A TOOL span is read by the convention that
decided it (`execution`, `tool_definition`); an LLM span by every convention (`response_calls`,
`histories`), since two instrumentations may write one request in two conventions. Tool lists a
request sent (`request_definitions`) are read from every span.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final, Literal, NamedTuple

from traceladder.extract.conventions.sightings import (
    DefinitionList,
    DefinitionSource,
    Execution,
    History,
    Sighting,
)
from traceladder.extract.conventions.views import SpanView

Role = Literal["tool", "llm", "other"]  # "other": ours, and neither (invoke_agent, AGENT, CHAIN…)
TOOL: Final = "tool"
LLM: Final = "llm"
OTHER: Final = "other"

Side = Literal["in", "out"]
Messages = list[tuple[str | None, str | None]]  # (role, text) in order


class ToolColumns(NamedTuple):
    """The tool columns the store keeps next to a span's `attributes`, derived by the extraction
    stage (`extract.stage.annotate`)."""

    operation: str | None
    tool_name: str | None
    tool_call_id: str | None
    tool_arguments: str | None
    tool_result: str | None
    error_type: str | None
    convention: str | None


class Convention:
    """Base class: every hook answers "nothing here"; a convention overrides what it reads."""

    name: ClassVar[str]
    precedence: ClassVar[int] = 100  # lower is asked first
    # Attribute keys that make a span worth reading; a span with none of any convention's (and no
    # events) is skipped with one set operation.
    markers: ClassVar[frozenset[str]] = frozenset()
    # The instrumentation scopes (`span.scope_name`) whose spans this convention reads; None: any.
    # A convention that names them is not asked about another scope's spans by any hook of the
    # extraction (`registry.for_scope`), so each of its hooks must answer "nothing here" for them.
    scopes: ClassVar[frozenset[str] | None] = None

    def role(self, span: SpanView) -> Role | None:
        return None

    def fallback_role(self, span: SpanView) -> Role | None:
        return None

    def agent_name(self, span: SpanView) -> str | None:
        """The agent's name a span gives (the trace index keeps, of the first convention in
        precedence order that any span gives one for, the greatest)."""
        return None

    def execution(self, span: SpanView) -> Execution | None:
        """The tool execution a span this convention called a tool span records."""
        return None

    def response_calls(self, span: SpanView) -> list[Sighting]:
        """The calls an LLM span's response requested, in order (read from every LLM span)."""
        return []

    def carried_calls(self, span: SpanView) -> list[Sighting]:
        """Calls a span that wraps one model request records for it (a framework's task span
        whose serialized output keeps what the LLM span inside it dropped): they join the
        response of the LLM span directly inside."""
        return []

    def refine_execution(self, span: SpanView, execution: Execution) -> Execution:
        """The execution another convention read from `span`, corrected where this one knows
        better (a framework's envelope around the arguments or the result, unwrapped). Asked of
        every convention, in precedence order."""
        return execution

    def histories(self, span: SpanView) -> list[History]:
        """The request's input history (lazy: histories are the bulk of a trace's bytes)."""
        return []

    def request_definitions(self, span: SpanView) -> list[DefinitionList]:
        """Tool lists a request sent, recorded on this span."""
        return []

    def tool_definition(self, span: SpanView) -> DefinitionSource | None:
        """A tool span describing its own tool (a fallback for tools no request listed)."""
        return None

    def messages(self, attrs: dict[str, Any], side: Side) -> Messages:
        """(role, text) of one side of a request, for the user's request and the final answer."""
        return []

    def tool_columns(self, attrs: dict[str, Any]) -> ToolColumns | None:
        """The store's materialised tool columns of a span this convention calls a tool span."""
        return None
