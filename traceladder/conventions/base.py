"""The convention protocol: everything traceladder knows about one way of writing tool calls into
spans, in one class. A convention is OTel GenAI, OpenInference or OpenLLMetry, or a framework's
own shapes on top of one of them (LangChain's `invalid_tool_calls`, an envelope around a tool's
arguments, Bedrock content blocks).

Every method is total and pure: it reads one span (or one span's attributes) and returns what it
finds, never raises on what a producer sent, and returns nothing when the span is not its own.
The extraction (`collect`, `merge`), the store's materialised tool columns, the trace index and
the judge's exchange reader all ask the registry (`conventions.registry`), never a convention by
name — so a new framework is one module and one registration line.

How a span's role is decided: conventions are asked in `precedence` order, `role` first (a strong
signal: an explicit operation name, a span kind), then `fallback_role` (a weak one: an attribute
that only some producers set); the first answer wins. A TOOL span is read by the convention that
decided it (`execution`, `tool_definition`); an LLM span by every convention (`response_calls`,
`histories`), since two instrumentations may write one request in two conventions. Tool lists a
request sent (`request_definitions`) are read from every span.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final, Literal, NamedTuple

from traceladder.conventions.sightings import DefinitionList, DefinitionSource, Execution, History, Sighting
from traceladder.conventions.views import SpanView

Role = Literal["tool", "llm", "other"]  # "other": ours, and neither (invoke_agent, AGENT, CHAIN…)
TOOL: Final = "tool"
LLM: Final = "llm"
OTHER: Final = "other"

Side = Literal["in", "out"]
Messages = list[tuple[str | None, str | None]]  # (role, text) in order


class ToolColumns(NamedTuple):
    """The columns the store keeps next to a span's `attributes` (storage.spans, otlp.*)."""

    operation: str | None
    tool_name: str | None
    tool_call_id: str | None
    tool_arguments: str | None
    tool_result: str | None
    error_type: str | None
    convention: str | None


def other_scope_sql(*scopes: str) -> str:
    """`untouched_sql` of a framework convention that reads only spans of its own scopes."""
    listed = ", ".join("'" + scope.replace("'", "''") + "'" for scope in scopes)
    return f"coalesce({{scope_name}} NOT IN ({listed}), true)"


class SetExtraction(NamedTuple):
    """A convention's extraction as SQL over the stored spans (the set-based fold,
    `storage.set_fold`). `sql` is one SELECT over the table `fold_spans` — one row per stored
    span of the traces being folded: trace_id, span_id, parent_span_id, start_ns and end_ns (0
    when unset), status_code, events (JSON text), scope_name, `role` (as `registry.role_sql`
    decides it), and one JSON column per attribute named in `keys`, named by the attribute's
    full key (`"gen_ai.tool.name"`; NULL when the span lacks it).

    It returns the `tool_calls` rows (trace_id, ordinal, tool_name, call_id, arguments_raw,
    result, status, error_type, convention, origin, span_id, response_span_id, record_id, turn,
    call_index, start_ns, end_ns; then arguments_structured and execution_arguments: for a row
    whose argument text the SQL leaves NULL, the structured arguments as JSON and the tool span's
    text, decided by the Python's own rule) with `unsettled` false, and a row with `unsettled`
    true for every trace whose rows it cannot give exactly as the Python extraction would (any
    shape it does not cover): those traces go to the Python extraction. The Python extraction
    stays the reference: tests/conventions/test_set_fold.py requires identical rows on every captured
    fixture."""

    sql: str
    keys: tuple[str, ...]  # the attributes the SQL reads: each a column of `fold_spans`


class Convention:
    """Base class: every hook answers "nothing here"; a convention overrides what it reads."""

    name: ClassVar[str]
    precedence: ClassVar[int] = 100  # lower is asked first
    # Attribute keys that make a span worth reading; a span with none of any convention's (and no
    # events) is skipped with one set operation.
    markers: ClassVar[frozenset[str]] = frozenset()
    # `role` and `fallback_role` as SQL over one `spans` row: an expression giving 'tool', 'llm',
    # 'other' or NULL, written with the placeholders {operation}, {attributes} (JSON text) and
    # {scope_name}. They must agree with the Python (tests/conventions/test_convention_registry.py runs both
    # over every captured fixture).
    role_sql: ClassVar[str | None] = None
    fallback_role_sql: ClassVar[str | None] = None
    # The agent's name as SQL over one `spans` row (same placeholders, plus {name}), NULL when the
    # span names none; the trace index keeps the first convention's answer that any span gives.
    agent_name_sql: ClassVar[str | None] = None
    # Substrings of a span's attribute JSON without which it cannot be this convention's tool span
    # (the file-ingest path decides tool columns only for spans that contain one).
    tool_json_markers: ClassVar[tuple[str, ...]] = ()
    # The store's tool columns of this convention's tool spans as SQL, for the file-ingest
    # shredder (`otlp.shred`): one expression per `ToolColumns` field, written with
    # {str:KEY} (the attribute's string value; NULL when absent) and {has:KEY} (true when the
    # attribute is present). A span one of whose named attributes holds anything but a string
    # is read by `tool_columns` in Python instead, so the SQL only ever sees text.
    tool_columns_sql: ClassVar[ToolColumns | None] = None
    # The set-based fold (`storage.set_fold`): this convention's extraction as SQL, or None.
    set_extraction: ClassVar[SetExtraction | None] = None
    # For a convention without `set_extraction`: SQL over one `spans` row (same placeholders as
    # `role_sql`, plus {events} and {keys}, the attribute keys as a list) that is true when none
    # of its hooks can read anything from the span. A trace with a span it may read goes to the
    # Python extraction; a convention that gives neither sends every trace there (an installed
    # plug-in is never bypassed).
    untouched_sql: ClassVar[str | None] = None

    def role(self, span: SpanView) -> Role | None:
        return None

    def fallback_role(self, span: SpanView) -> Role | None:
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
