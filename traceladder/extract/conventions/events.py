"""The GenAI event form: log records (or span events) carrying one LLM call's content.

Deprecated per-message events (gen_ai.choice, gen_ai.assistant.message, gen_ai.tool.message;
still emitted by openai-v2's default mode) and the current gen_ai.client.inference.operation.details
(structured input/output messages). All events of one LLM span are gathered, then applied to it
as response outputs and an input history.
"""

from __future__ import annotations

from typing import Any

from traceladder.extract.conventions import otel_genai as og
from traceladder.extract.conventions.attribute_values import as_dict, name_text
from traceladder.extract.conventions.otel_genai import genai_history, genai_list
from traceladder.extract.conventions.sightings import (
    DefinitionList,
    History,
    LLMSpan,
    Message,
    ResponseOutput,
    Sighting,
    ToolResult,
    Turn,
)
from traceladder.extract.conventions.views import EVENT, SpanView

_LAST = 1 << 62  # a choice without a usable index sorts after the numbered ones


def span_events(span: SpanView, start: int) -> list[tuple[str, dict[str, Any], int]]:
    """The span's GenAI events (some SDKs attach the event form to the span): name, fields, time."""
    out = []
    for e in span.events or ():
        if isinstance(e, dict) and isinstance(e.get("attributes"), dict):
            name = og.event_name(e.get("name"), e["attributes"])
            if name in og.EVENT_NAMES:
                time_ns = e.get("time_ns")
                out.append((name, e["attributes"], time_ns if isinstance(time_ns, int) else start))
    return out


class Events:
    """The event form of one LLM span's content, gathered from its records or span events."""

    def __init__(self) -> None:
        self.choices: list[tuple[int, int, str, list[Sighting]]] = []  # (choice index, time, id, calls)
        self.messages: list[tuple[int, str, Message]] = []  # (time, record id, message)
        self.details: list[tuple[int, str, Any, Any]] = []  # (time, record id, input, output)
        self.definitions: list[DefinitionList] = []

    def add(self, name: str, body: Any, attrs: dict[str, Any], time_ns: int, record_id: str | None) -> None:
        rid = record_id or ""
        if name == og.CHOICE:
            payload = og.event_payload(body, attrs)
            position = payload.get("index")
            position = position if isinstance(position, int) and not isinstance(position, bool) else _LAST
            raw = payload.get("message")
            message = as_dict(raw)
            calls = (
                og.message_calls(message, record_id)
                if message is not None
                else og.block_calls(raw, record_id)
            )
            self.choices.append((position, time_ns, rid, calls))
        elif name == og.ASSISTANT_MESSAGE:
            calls = og.message_calls(og.event_payload(body, attrs), record_id)
            if calls:
                self.messages.append((time_ns, rid, Turn(calls, record_id)))
        elif name == og.TOOL_MESSAGE:
            payload = og.event_payload(body, attrs)
            blocks = og.block_results(payload.get("content"), record_id)
            for result in blocks or [
                # Bedrock's (botocore instrumentation) content is Converse blocks: their text
                ToolResult(name_text(payload.get("id")), og.blocks_text(payload.get("content")), record_id)
            ]:
                self.messages.append((time_ns, rid, result))
        elif name == og.OPERATION_DETAILS:
            inputs = og.details_value(body, attrs, og.INPUT_MESSAGES)
            outputs = og.details_value(body, attrs, og.OUTPUT_MESSAGES)
            self.details.append((time_ns, rid, inputs, outputs))
            tools = og.details_value(body, attrs, og.TOOL_DEFINITIONS)
            if tools is not None:
                self.definitions.append(genai_list(tools))

    def apply(self, llm: LLMSpan, ordered_by_list: bool) -> None:
        """Adds the responses and histories found. Span events keep their list order; log records
        are ordered by timestamp only when all differ (openai-v2 stamps every record 0: a bag)."""
        if self.choices:
            self.choices.sort(key=lambda c: c[:3])
            calls = [call for choice in self.choices for call in choice[3]]
            if calls:
                llm.outputs.append(ResponseOutput(calls, EVENT))
        for _, rid, inputs, outputs in sorted(self.details, key=lambda d: d[:2]):
            calls = og.output_calls(outputs, rid or None)
            if calls:
                llm.outputs.append(ResponseOutput(calls, EVENT))
            if inputs is not None:
                llm.histories.append(genai_history(inputs, rid or None))
        if self.messages:
            ordered = ordered_by_list or len({m[0] for m in self.messages}) == len(self.messages)
            if not ordered_by_list:
                self.messages.sort(key=lambda m: m[:2])
            messages = [m[2] for m in self.messages]
            turns = sum(isinstance(m, Turn) for m in messages)
            llm.histories.append(History(lambda: messages, ordered, True, lambda: turns))
