"""One tool call executed in a domain's sandbox, recorded as an `execute_tool` span.

The one place a tool call becomes a sandbox action and a span: the built-in loop, an agent under
test calling `call_tool`, and the MCP tool server all execute through `execute_tool_call`, so the
span a rung reads is the same whoever asked for the call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer, use_span

from traceladder.instrumentation import semconv as sc
from traceladder.produce.agent.messages import ToolCallRequest, dumps
from traceladder.suite.domain.base import Sandbox


def execute_tool_call(
    call: ToolCallRequest,
    sandbox: Sandbox,
    tracer: Tracer,
    conversation: str,
    descriptions: dict[str, str],
    clock: Callable[[], int],
) -> dict[str, Any]:
    """Execute `call` in `sandbox` inside an `execute_tool {name}` span and return the tool
    message for the conversation (`{"role": "tool", "tool_call_id", "content"}`).

    The span carries the raw argument text (even when it is not valid JSON: that is evidence for
    rung 1) and the result text, or ERROR status with `error.type` when the sandbox refused the
    call. A failing tool is an observation, never an exception: nothing here raises for a bad
    call (an unknown tool, invalid JSON, a rejected action).
    """
    attrs: dict[str, Any] = {
        sc.OPERATION_NAME: sc.OP_EXECUTE_TOOL,
        sc.TOOL_NAME: call.name,
        sc.TOOL_TYPE: "function",
        sc.CONVERSATION_ID: conversation,
        # The model's raw text, even when it is not valid JSON: that is evidence for rung 1.
        sc.TOOL_CALL_ARGUMENTS: call.raw_arguments,
    }
    if call.call_id is not None:
        attrs[sc.TOOL_CALL_ID] = call.call_id
    if call.name in descriptions:
        attrs[sc.TOOL_DESCRIPTION] = descriptions[call.name]
    with timed_span(tracer, f"execute_tool {call.name}", SpanKind.INTERNAL, attrs, clock) as span:
        result = execute_on(span, call, sandbox)
    return {"role": "tool", "tool_call_id": call.call_id, "content": result}


def execute_on(span: Span, call: ToolCallRequest, sandbox: Sandbox) -> str:
    """Execute `call` in `sandbox` and record the outcome on `span` (an `execute_tool` span: ours,
    or one the agent under test opened for this very call); returns the result text."""
    outcome = sandbox.execute(call.name, call.raw_arguments)
    result = outcome.text if outcome.text is not None else dumps(outcome.result)
    if outcome.ok:
        span.set_attribute(sc.TOOL_CALL_RESULT, result)
    else:
        span.set_status(Status(StatusCode.ERROR, outcome.result["error"]["message"]))
        span.set_attribute(sc.ERROR_TYPE, outcome.error_type or "_OTHER")
        span.set_attribute(sc.TOOL_ERROR, result)
    return result


@contextmanager
def timed_span(
    tracer: Tracer, name: str, kind: SpanKind, attributes: dict[str, Any], clock: Callable[[], int]
) -> Iterator[Span]:
    """A current span with sampling-relevant attributes at start and timestamps from `clock`
    (a fixed clock makes span tests exact)."""
    span = tracer.start_span(name, kind=kind, attributes=attributes, start_time=clock())
    try:
        with use_span(span, end_on_exit=False, record_exception=False, set_status_on_exception=False):
            yield span
    finally:
        span.end(end_time=clock())
