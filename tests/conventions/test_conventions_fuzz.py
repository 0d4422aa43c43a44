"""A fuzz of `extract_trace`: whatever a producer sends — any of the attributes the conventions
read, with any JSON-ish value, on spans and log records in any order — extraction returns
well-formed rows and never raises."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from traceladder.extract.conventions import ExtractedCall, LogView, SpanView, extract_trace

_KEYS = [
    "gen_ai.operation.name", "gen_ai.tool.name", "gen_ai.tool.call.id", "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result", "traceladder.tool.error", "error.type", "gen_ai.input.messages",
    "gen_ai.output.messages", "gen_ai.tool.definitions", "gen_ai.tool.description", "openinference.span.kind",
    "tool.name", "tool.id", "input.value", "output.value", "tool.parameters", "tool.description",
    "llm.output_messages.0.message.role", "llm.output_messages.0.message.tool_calls.0.tool_call.id",
    "llm.output_messages.0.message.tool_calls.0.tool_call.function.name",
    "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments",
    "llm.input_messages.0.message.role", "llm.input_messages.0.message.tool_call_id",
    "llm.input_messages.0.message.content", "llm.input_messages.x.message.role",
    "llm.input_messages.1.message.tool_calls.0.tool_call.function.name", "llm.tools.0.tool.json_schema",
    "traceloop.span.kind", "traceloop.entity.name", "traceloop.entity.input", "traceloop.entity.output",
    "llm.request.type", "gen_ai.completion.0.role", "gen_ai.completion.0.tool_calls.0.name",
    "gen_ai.completion.0.tool_calls.0.arguments", "gen_ai.prompt.0.role", "gen_ai.prompt.1.tool_calls.0.id",
    "gen_ai.prompt.2.tool_call_id", "llm.request.functions.0.name", "llm.request.functions.0.parameters",
    "event.name",
]  # fmt: skip
_WORDS = ["chat", "execute_tool", "invoke_agent", "TOOL", "LLM", "tool", "tool_call", "tool_call_response",
          "assistant", "tool", "get_time", "call_1", "", "{", '{"a":', "[", "null"]  # fmt: skip

_leaf = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.sampled_from(_WORDS), st.text(max_size=8)
)
_part_keys = st.sampled_from(
    [
        "type",
        "id",
        "name",
        "arguments",
        "response",
        "result",
        "parts",
        "role",
        "tool_calls",
        "function",
        "message",
        "index",
        "content",
        "description",
        "parameters",
    ]  # fmt: skip
)
_value = st.recursive(
    _leaf,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_part_keys, inner, max_size=5)),
    max_leaves=6,
)
# plausible shapes with garbage leaves reach the deep branches that random dicts rarely do
_call = st.fixed_dictionaries(
    {
        "id": _leaf,
        "type": _leaf,
        "function": st.one_of(_value, st.fixed_dictionaries({"name": _leaf, "arguments": _value})),
    }
)
_part = st.fixed_dictionaries(
    {"type": st.sampled_from(["tool_call", "tool_call_response", "text", 5])},
    optional={"id": _leaf, "name": _leaf, "arguments": _value, "response": _value, "result": _value},
)
_message = st.fixed_dictionaries(
    {"role": st.sampled_from(["assistant", "tool", "user", None])},
    optional={"parts": st.one_of(st.lists(_part, max_size=3), _value), "tool_calls": st.lists(_call, max_size=2),
              "message": st.fixed_dictionaries({"tool_calls": st.lists(_call, max_size=2)}), "index": _leaf,
              "content": _leaf, "id": _leaf},
)  # fmt: skip
_structured = st.one_of(_value, st.lists(_message, max_size=3), _message)
_attr_value = st.one_of(
    _structured, _structured.map(lambda v: json.dumps(v)), _structured.map(lambda v: json.dumps(v)[:-1])
)
_attrs = st.dictionaries(st.sampled_from(_KEYS), _attr_value, max_size=6)
_event_names = st.sampled_from(
    [
        "gen_ai.choice",
        "gen_ai.assistant.message",
        "gen_ai.tool.message",
        "exception",
        "gen_ai.client.inference.operation.details",
        None,
    ]  # fmt: skip
)


_event = st.one_of(
    st.fixed_dictionaries({"name": _event_names, "time_ns": st.integers(0, 5), "attributes": _attrs}), _value
)


@st.composite
def traces(draw) -> tuple[list[SpanView], list[LogView]]:
    ids = [f"{i:016x}" for i in range(draw(st.integers(1, 4)))]
    spans = [
        SpanView(
            span_id,
            draw(st.sampled_from([None, *ids])),
            "x",
            "INTERNAL",
            draw(st.integers(0, 5)),
            draw(st.integers(0, 9)),
            draw(st.sampled_from(["UNSET", "OK", "ERROR"])),
            None,
            draw(st.one_of(_attrs, _attrs, _attrs, _value)),  # now and then not even a dict
            draw(st.one_of(st.lists(_event, max_size=2), st.none(), _value)),
            None,
        )
        for span_id in ids
    ]
    logs = [
        LogView(
            f"r{i}",
            draw(st.sampled_from([None, *ids])),
            draw(st.integers(0, 3)),
            draw(_event_names),
            draw(_structured),
            draw(_attrs),
            None,
        )  # fmt: skip
        for i in range(draw(st.integers(0, 3)))
    ]
    return spans, logs


@settings(max_examples=150, deadline=None)
@given(traces())
def test_garbage_never_raises(trace):
    spans, logs = trace
    x = extract_trace(spans, logs)
    assert [c.ordinal for c in x.calls] == list(range(1, len(x.calls) + 1))
    for c in x.calls:
        assert isinstance(c, ExtractedCall) and isinstance(c.tool_name, str)
        assert c.status in ("ok", "error", "unknown") and c.origin in (
            "response",
            "event",
            "tool_span",
            "history",
        )
        assert c.arguments_raw is None or isinstance(c.arguments_raw, str)
        assert c.result is None or isinstance(c.result, str)
    assert [d.name for d in x.definitions] == sorted({d.name for d in x.definitions})
    assert extract_trace(list(reversed(spans)), list(reversed(logs))) == x
