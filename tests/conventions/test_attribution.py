"""The attribution rule (docs/conventions.md, precedence): a trace's calls are the calls made in it.

Built from real producer captures cut the way a multi-turn conversation or a loop that traces each
request on its own cuts them: the later request, alone in its trace, holds every earlier call in
its input history. Those calls are the earlier trace's — never this one's rows, so no per-trace
check can count them again; they come back apart (`prior`) to link the two traces."""

from __future__ import annotations

import pytest
from test_conventions import expected, load  # tests/ is on sys.path under pytest (no package)
from test_conventions_edges import basics, chat_spans, truth

from traceladder.extract.conventions import extract_trace

FIXTURES = ["openinference/parallel", "otel-openai-v2-experimental/parallel", "otel-genai-openai/parallel"]


@pytest.mark.parametrize("fixture", FIXTURES)
def test_a_request_traced_alone_owns_only_what_its_response_made(fixture):
    """The last request (after turn 1's parallel calls and turn 2's booking) alone in a trace:
    its response made no call, so the trace has none; all three are `prior`, once each."""
    spans, logs = load(fixture)
    last = chat_spans(spans)[-1]
    x = extract_trace([last], [r for r in logs if r.span_id == last.span_id])
    assert x.calls == []
    assert [(c.tool_name, c.call_id, c.arguments_raw) for c in x.prior] == [
        (n, i, a) for n, i, a, _ in truth(fixture)
    ]


@pytest.mark.parametrize("fixture", FIXTURES)
def test_the_second_request_alone_owns_its_booking_and_not_the_lookups(fixture):
    spans, logs = load(fixture)
    second = chat_spans(spans)[1]
    x = extract_trace([second], [r for r in logs if r.span_id == second.span_id])
    assert [(c.tool_name, c.call_id) for c in x.calls] == [(n, i) for n, i, _, _ in truth(fixture)[2:]]
    assert [(c.tool_name, c.call_id) for c in x.prior] == [(n, i) for n, i, _, _ in truth(fixture)[:2]]


@pytest.mark.parametrize("fixture", FIXTURES)
def test_a_whole_trace_keeps_every_call_and_has_none_before_it(fixture):
    """The rule takes nothing from a trace whose first request starts the dialogue."""
    spans, logs = load(fixture)
    x = extract_trace(spans, logs)
    assert basics(x) == truth(fixture)
    assert x.prior == ()
    assert len(expected(fixture)["calls"]) == len(x.calls)
