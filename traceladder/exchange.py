"""What was said in one trace besides its calls, as plain data: the rows storage reads for it
(`ExchangeRows`) and what the conventions read out of them (`Exchange`, `ExchangeDetail`).

Plain data with no dependencies, so storage (which reads the rows) and the conventions (which
read them by producer shape) share it without either importing the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple


class Exchange(NamedTuple):
    instruction: str | None
    final_answer: str | None
    root_span_id: str | None


@dataclass(frozen=True)
class Message:
    """One message before the model's first turn: `role` as the producer named it (None: unnamed)."""

    role: str | None
    text: str


@dataclass(frozen=True)
class ExchangeCall:
    """A tool call as the `tool_calls` read model has it: the model's exact argument text and the
    result returned to the model (None when the trace records none)."""

    ordinal: int
    tool: str | None
    arguments_raw: str | None
    result: str | None
    status: str | None
    error_type: str | None


@dataclass(frozen=True)
class Response:
    """One model response: `step` its 1-based place among the trace's LLM spans (None for the calls
    no recorded response shows, e.g. a trace of tool spans only), its text, the calls it made."""

    step: int | None
    text: str | None
    calls: list[ExchangeCall] = field(default_factory=list)


@dataclass(frozen=True)
class ExchangeDetail:
    """A trace's conversation in order: the messages sent before the model's first turn (system
    prompt, the user's request), each model response with its calls and their results, and the
    final answer (which is also the text of the last response when the spans record it)."""

    opening: list[Message] = field(default_factory=list)
    responses: list[Response] = field(default_factory=list)
    final_answer: str | None = None


@dataclass(frozen=True)
class ExchangeRows:
    """What storage holds of some traces that says what was said, as stored (nothing interpreted):
    per trace, the answer a suite run recorded, its LLM spans' attributes in start order (span id,
    parsed attributes; `{}` where they are not a JSON object), its OTel GenAI message log records
    (event name, parsed body) in time order, its root span, and its calls (response span id, call)
    in ordinal order — the last two only where asked for."""

    trace_ids: list[str]
    recorded: dict[str, str | None] = field(default_factory=dict)
    llm: dict[str, list[tuple[str, dict[str, Any]]]] = field(default_factory=dict)
    events: dict[str, list[tuple[str, object]]] = field(default_factory=dict)
    roots: dict[str, str | None] = field(default_factory=dict)
    calls: dict[str, list[tuple[str | None, ExchangeCall]]] = field(default_factory=dict)
