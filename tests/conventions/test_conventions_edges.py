"""Edge cases of `extract_trace`, each built by changing a real producer capture the way a real
trace goes wrong (a lost span, ids a server reuses, a redacted attribute). The fuzz that no
producer's garbage can make it raise is in test_conventions_fuzz.py."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from test_conventions import expected, load, rewrite  # tests/ is on sys.path under pytest (no package)

from traceladder.extract.conventions import SpanView, TraceExtraction, extract_trace


def is_chat(span: SpanView) -> bool:
    a = span.attributes
    return a.get("gen_ai.operation.name") == "chat" or a.get("openinference.span.kind") == "LLM"


def chat_spans(spans: list[SpanView]) -> list[SpanView]:
    return sorted((s for s in spans if is_chat(s)), key=lambda s: s.start_ns)


def truth(fixture: str) -> list[tuple[Any, ...]]:
    return [(c["name"], c["id"], c["arguments_raw"], c["result"]) for c in expected(fixture)["calls"]]


def basics(x: TraceExtraction) -> list[tuple[Any, ...]]:
    return [(c.tool_name, c.call_id, c.arguments_raw, c.result) for c in x.calls]


# ---------------------------------------------------------------------------------------------


def test_an_empty_trace_has_nothing():
    assert extract_trace([]) == TraceExtraction([], [])
    assert extract_trace([], []) == TraceExtraction([], [])


def test_a_trace_without_genai_spans_has_nothing():
    spans, _ = load("otel-genai-openai/parallel")
    agent = [s for s in spans if s.parent_span_id is None]
    assert extract_trace(
        [dataclasses.replace(agent[0], attributes={"http.method": "GET"})]
    ) == TraceExtraction([], [])


@pytest.mark.parametrize("fixture", ["otel-genai-openai/parallel", "otel-genai-openai/invalid_json"])
def test_only_execute_tool_spans(fixture):
    """An agent that records only its tool executions: calls ordered by tool span start."""
    spans, _ = load(fixture)
    tools = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "execute_tool"]
    x = extract_trace(tools)
    by_start = sorted(tools, key=lambda s: s.start_ns)
    assert [c.span_id for c in x.calls] == [s.span_id for s in by_start]
    for c, t in zip(x.calls, expected(fixture)["calls"], strict=True):
        assert (c.tool_name, c.call_id, c.arguments_raw) == (t["name"], t["id"], t["arguments_raw"])
        assert (c.origin, c.turn, c.call_index, c.response_span_id) == ("tool_span", None, None, None)
        assert c.status == ("error" if t["error"] else "ok")
        assert c.result == (None if t["error"] else t["result"])  # the error text was only in history


def test_tool_spans_without_an_operation_name_are_tool_spans():
    """Pydantic AI sets gen_ai.tool.name but no gen_ai.operation.name on its tool spans."""
    fixture = "otel-genai-openai/parallel"
    spans, logs = load(fixture)
    stripped = [
        dataclasses.replace(
            s, attributes={k: v for k, v in s.attributes.items() if k != "gen_ai.operation.name"}
        )
        if s.attributes.get("gen_ai.operation.name") == "execute_tool"
        else s
        for s in spans
    ]
    assert extract_trace(stripped, logs) == extract_trace(spans, logs)


@pytest.mark.parametrize(
    "fixture", ["otel-openai-v2-default/parallel", "otel-openai-v2-experimental/invalid_json"]
)
def test_the_event_form_as_span_events_reads_like_log_records(fixture):
    """Some SDKs attach the GenAI events to the span instead of emitting log records."""
    spans, logs = load(fixture)
    events: dict[str, list[dict[str, Any]]] = {}
    for r in logs:  # in the order the SDK emitted them (the capture keeps it), as span events would be
        fields = r.body if isinstance(r.body, dict) else {}
        events.setdefault(r.span_id, []).append(
            {"name": r.event_name, "time_ns": r.time_ns, "attributes": {**r.attributes, **fields}}
        )
    with_events = [dataclasses.replace(s, events=s.events + events.get(s.span_id, [])) for s in spans]
    from_records, from_events = extract_trace(spans, logs), extract_trace(with_events)
    assert basics(from_events) == basics(from_records) == truth(fixture)
    assert [(c.origin, c.turn, c.call_index, c.status) for c in from_events.calls] == [
        (c.origin, c.turn, c.call_index, c.status) for c in from_records.calls
    ]
    assert all(c.record_id is None for c in from_events.calls)


def test_a_history_out_of_order_neither_duplicates_calls_nor_loses_results():
    """The spec wants input messages in the order sent; a producer that reorders them (here:
    reversed) must not turn known calls into history-only copies, and ids still place results."""
    fixture = "otel-openai-v2-experimental/parallel"
    spans, logs = load(fixture)

    def reverse(messages: Any) -> Any:
        return json.dumps(json.loads(messages)[::-1]) if isinstance(messages, str) else messages[::-1]

    spans = [
        dataclasses.replace(
            s,
            attributes={
                **s.attributes,
                "gen_ai.input.messages": reverse(s.attributes["gen_ai.input.messages"]),
            },
        )
        if "gen_ai.input.messages" in s.attributes
        else s
        for s in spans
    ]
    logs = [
        dataclasses.replace(
            r,
            attributes={
                **r.attributes,
                "gen_ai.input.messages": reverse(r.attributes["gen_ai.input.messages"]),
            },
        )
        for r in logs
    ]
    x = extract_trace(spans, logs)
    assert basics(x) == truth(fixture)
    assert {c.origin for c in x.calls} == {"response"}


def test_tool_spans_nothing_requested_interleave_by_start_time():
    """Responses recorded for turn 1 only: the turn-2 call survives as a tool span and sorts after
    turn 1's calls, by its start time."""
    fixture = "otel-genai-openai/parallel"
    spans, _ = load(fixture)
    later_chats = {s.span_id for s in chat_spans(spans)[1:]}
    x = extract_trace([s for s in spans if s.span_id not in later_chats])
    assert basics(x) == truth(fixture)
    assert [(c.origin, c.turn) for c in x.calls] == [("response", 1), ("response", 1), ("tool_span", None)]


def test_a_tool_span_without_id_or_arguments_joins_the_latest_request_of_its_tool():
    """The failed call's tool span is missing and the other records no arguments: with nothing
    but the tool name to go on, the execution belongs to the most recent request of that tool."""
    fixture = "openinference/invalid_json"
    spans, logs = load(fixture)
    tools = sorted(
        (s for s in spans if s.attributes.get("openinference.span.kind") == "TOOL"), key=lambda s: s.start_ns
    )
    bare = dataclasses.replace(
        tools[1], attributes={k: v for k, v in tools[1].attributes.items() if k != "input.value"}
    )
    x = extract_trace([s for s in spans if s not in tools] + [bare], logs)
    assert [(c.call_id, c.span_id, c.status) for c in x.calls] == [
        ("call_c1", chat_spans(spans)[0].span_id, "ok"),  # the error text came back in history
        ("call_c2", bare.span_id, "ok"),
    ]


def test_ids_missing_everywhere():
    """Strip every call id: tool spans join requests by name, history results by position."""
    fixture = "otel-genai-openai/parallel"
    spans, logs = load(fixture)
    spans, logs = rewrite(spans, logs, lambda s: s.replace('"id":"call_', '"id":null,"x":"'))
    spans = [
        dataclasses.replace(
            s, attributes={k: v for k, v in s.attributes.items() if k != "gen_ai.tool.call.id"}
        )
        for s in spans
    ]
    x = extract_trace(spans, logs)
    assert basics(x) == [(n, None, a, r) for n, _, a, r in truth(fixture)]
    assert [(c.turn, c.call_index) for c in x.calls] == [(1, 0), (1, 1), (2, 0)]


@pytest.mark.parametrize(
    "fixture",
    ["otel-genai-openai/invalid_json", "otel-openai-v2-default/invalid_json", "openinference/invalid_json"],
)
def test_ids_repeated_across_turns(fixture):
    """Some servers answer `call_0` every turn: the same id names two calls of the same tool, one
    failed; each keeps its own arguments, result and status."""
    spans, logs = rewrite(
        *load(fixture), lambda s: s.replace("call_c1", "call_0").replace("call_c2", "call_0")
    )
    x = extract_trace(spans, logs)
    assert basics(x) == [(n, "call_0", a, r) for n, _, a, r in truth(fixture)]
    assert [c.status for c in x.calls] == ["error", "ok"]
    assert [c.turn for c in x.calls] == [1, 2]


@pytest.mark.parametrize("fixture", ["openinference/parallel", "otel-openai-v2-experimental/parallel"])
def test_calls_the_first_surviving_request_already_held_are_not_the_traces(fixture):
    """Turn 1's LLM span (and its records) and both tool spans are lost: turn 1's calls survive
    only in later requests' input. The first request left holds them, so by the attribution rule
    (docs/conventions.md, precedence) they were made before the trace as far as it can tell —
    handed back apart as `prior`, with the results fed back, never counted as its rows."""
    spans, logs = load(fixture)
    first = chat_spans(spans)[0]
    lost = {first.span_id} | {s.span_id for s in spans if s.name.endswith(("get_weather", "get_time"))}
    spans = [s for s in spans if s.span_id not in lost]
    logs = [r for r in logs if r.span_id not in lost]
    x = extract_trace(spans, logs)
    assert basics(x) == truth(fixture)[2:]
    assert [(c.origin, c.turn, c.tool_name) for c in x.calls] == [("response", 1, "book_table")]
    prior = [(c.tool_name, c.call_id, c.arguments_raw, c.result) for c in x.prior]
    assert prior == truth(fixture)[:2]
    assert [(c.origin, c.call_index) for c in x.prior] == [("history", 0), ("history", 1)]


def test_calls_only_in_unordered_log_records():
    """openai-v2 legacy events (every record stamped 0, so no order): turn 1's chat span and its
    records lost; the calls the next request's assistant-message records hold were made before the
    trace as far as it can tell: apart, once each, with their surviving tool spans' results."""
    fixture = "otel-openai-v2-default/parallel"
    spans, logs = load(fixture)
    first = chat_spans(spans)[0]
    spans = [s for s in spans if s.span_id != first.span_id]
    logs = [r for r in logs if r.span_id != first.span_id]
    x = extract_trace(spans, logs)
    assert basics(x) == truth(fixture)[2:]
    assert [(c.origin, c.turn) for c in x.calls] == [("event", 1)]
    assert [(c.tool_name, c.call_id, c.arguments_raw) for c in x.prior] == [
        (n, i, a) for n, i, a, _ in truth(fixture)[:2]
    ]


def test_openai_v2_default_needs_its_log_records():
    """Its spans hold no content: without the records only the tool spans remain (no arguments,
    no results); the records alone (logs can arrive before spans) give every call."""
    fixture = "otel-openai-v2-default/parallel"
    spans, logs = load(fixture)
    spans_only = extract_trace(spans)
    assert [(c.tool_name, c.call_id, c.arguments_raw, c.result, c.origin) for c in spans_only.calls] == [
        (n, i, None, None, "tool_span") for n, i, _, _ in truth(fixture)
    ]
    logs_only = extract_trace([], logs)  # every record stamped 0: history depth orders the turns
    assert basics(logs_only) == truth(fixture)
    assert [(c.origin, c.turn, c.start_ns) for c in logs_only.calls] == [
        ("event", 1, None),
        ("event", 1, None),
        ("event", 2, None),
    ]


def test_id_less_results_in_unordered_records_pair_when_unambiguous():
    fixture = "otel-openai-v2-default/no_ids"
    x = extract_trace(*load(fixture))
    assert basics(x) == truth(fixture)


def test_malformed_message_attributes_do_not_hide_tool_spans():
    """Truncated message JSON (a size limit cut it): no crash, the tool spans still give the calls."""
    fixture = "otel-genai-openai/parallel"
    spans, logs = load(fixture)
    cut = {"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.definitions"}
    spans = [
        dataclasses.replace(
            s, attributes={k: v[: len(v) // 2] if k in cut else v for k, v in s.attributes.items()}
        )
        for s in spans
    ]
    x = extract_trace(spans, logs)
    assert basics(x) == truth(fixture)
    assert {c.origin for c in x.calls} == {"tool_span"}
    # tool list unreadable: the execute_tool spans' descriptions stand in, without schemas
    assert [(d.name, d.parameters) for d in x.definitions] == [
        (n, None) for n in ("book_table", "get_time", "get_weather")
    ]


def _parsed(value: Any) -> Any:
    try:
        return json.loads(value) if isinstance(value, str) and value[:1] in "[{" else value
    except ValueError:
        return value


@pytest.mark.parametrize(
    "fixture", ["otel-genai-openai/parallel", "openllmetry/parallel", "openinference/parallel"]
)
def test_structured_values_read_like_json_text(fixture):
    """SDK ≥1.45 sends dicts/lists as kvlist/array values: message attributes, tool lists and
    OpenInference schemas read the same as their JSON text."""
    spans, logs = load(fixture)
    keep_text = {"gen_ai.tool.call.arguments", "gen_ai.tool.call.result", "input.value", "output.value"}
    structured = [
        dataclasses.replace(
            s, attributes={k: v if k in keep_text else _parsed(v) for k, v in s.attributes.items()}
        )
        for s in spans
    ]
    assert extract_trace(structured, logs) == extract_trace(spans, logs)


def test_structured_arguments_are_reserialised_not_byte_exact():
    spans, _ = load("otel-genai-openai/parallel")
    tools = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "execute_tool"]
    compact = [
        dataclasses.replace(
            s, attributes={**s.attributes, "gen_ai.tool.call.arguments": {"location": "Paris", "n": 1}}
        )
        for s in tools[:1]
    ]
    (call,) = extract_trace(compact).calls
    assert call.arguments_raw == '{"location": "Paris", "n": 1}'


def test_invalid_json_arguments_stay_raw():
    for fixture in (
        "otel-genai-openai/invalid_json",
        "openllmetry/invalid_json",
        "openinference/invalid_json",
    ):
        x = extract_trace(*load(fixture))
        assert x.calls[0].arguments_raw == '{"location": "Paris"'


def test_nested_tool_spans_of_one_execution_count_once():
    """An MCP client span `tools/call x` with its server span as child: one execution."""
    spans, _ = load("otel-genai-openai/parallel")
    children = [
        dataclasses.replace(
            s, span_id=s.span_id[::-1], parent_span_id=s.span_id, name=f"tools/call {s.name[13:]}"
        )
        for s in spans
        if s.attributes.get("gen_ai.operation.name") == "execute_tool"
    ]
    assert extract_trace(spans + children) == extract_trace(spans)


def test_nested_llm_spans_of_one_request_are_one_response():
    """Two instrumentations wrapping one request (a framework LLM span around the client's)."""
    spans, _ = load("openinference/parallel")
    inner = [
        dataclasses.replace(s, span_id=s.span_id[::-1], parent_span_id=s.span_id) for s in chat_spans(spans)
    ]
    x, y = extract_trace(spans + inner), extract_trace(spans)
    assert basics(x) == basics(y)
    assert [(c.turn, c.call_index) for c in x.calls] == [(c.turn, c.call_index) for c in y.calls]
