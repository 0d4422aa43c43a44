"""A case's tools as the agent under test reaches them: `call_tool(name, arguments)`.

Each call executes in the case's own sandbox through `produce.agent.tool_execution` (the built-in loop's
own path), so it is an `execute_tool` span in the case's trace, arguments and result captured. A
bad call — an unknown tool, arguments that are not JSON — is a tool error the agent reads, as a
model would, never an exception; a call after the case ended (the agent outlived its timeout)
raises `CaseEnded`, and changes nothing.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span, Tracer

from traceladder.instrumentation import semconv as sc
from traceladder.produce.agent.messages import ToolCallRequest
from traceladder.produce.agent.tool_execution import execute_on, execute_tool_call
from traceladder.suite.domain.base import Domain, Sandbox


class CaseEnded(RuntimeError):
    """A tool was called after its case ended (timed out, stopped): nothing was executed."""


class ToolBox:
    """The tools of one case run. Thread-safe: an agent may call tools concurrently."""

    def __init__(
        self,
        domain: Domain,
        sandbox: Sandbox,
        tracer: Tracer,
        conversation: str,
        root: Span | None = None,
        clock: Callable[[], int] = time.time_ns,
    ) -> None:
        self.sandbox = sandbox
        self._root = root
        self._tracer = tracer
        self._conversation = conversation
        self._clock = clock
        self._descriptions = {
            t["function"]["name"]: t["function"].get("description", "") for t in domain.tools
        }
        self._lock = threading.Lock()
        self._ended = False
        self.calls = 0

    def call(self, name: str, arguments: Any, call_id: str | None = None) -> str:
        """Execute one call and return the result text (a JSON error object for a failed call).
        `arguments`: the JSON text as the model sent it, or an object (serialised once here).
        `call_id`: the model's id for the call, when the agent passes it. None is recorded as no
        id — never an invented one, which no model call would have: an instrumented agent's
        model call and this execution would then be read as two calls."""
        if not isinstance(name, str):
            raise TypeError(f"call_tool: the tool name must be a string, not {type(name).__name__}")
        raw = arguments if isinstance(arguments, str) else _json_text(arguments)
        with self._lock:
            if self._ended:
                raise CaseEnded(f"call_tool({name!r}) after the case ended; nothing was executed")
            self.calls += 1
        call = ToolCallRequest(call_id or None, name, raw, not isinstance(arguments, str))
        own = _agents_tool_span(name)
        if own is not None:
            # The agent's instrumentation already opened an execute_tool span for this call
            # (pydantic-ai, Strands, …): the evidence goes on it, so the call is one span, not two.
            own.set_attribute(sc.TOOL_CALL_ARGUMENTS, raw)
            return execute_on(own, call, self.sandbox)
        token = None
        current = trace.get_current_span().get_span_context()
        if self._root is not None and current.trace_id != self._root.get_span_context().trace_id:
            # Called from outside the case's context (a process's HTTP request, a thread the
            # agent started without its context): the span still belongs under the case's root.
            token = otel_context.attach(trace.set_span_in_context(self._root))
        try:
            message = execute_tool_call(
                call, self.sandbox, self._tracer, self._conversation, self._descriptions, self._clock
            )
        finally:
            if token is not None:
                otel_context.detach(token)
        return str(message["content"])

    def end(self) -> None:
        """No call is executed after this (the case's outcome and ledger are final)."""
        with self._lock:
            self._ended = True


def _agents_tool_span(name: str) -> Span | None:
    """The current span, when it is a recording GenAI `execute_tool` span of the tool `name`."""
    span = trace.get_current_span()
    attributes = getattr(span, "attributes", None) or {}
    if not span.is_recording() or attributes.get(sc.OPERATION_NAME) != sc.OP_EXECUTE_TOOL:
        return None
    return span if attributes.get(sc.TOOL_NAME) in (None, name) else None


def _json_text(arguments: Any) -> str:
    try:
        return json.dumps(arguments, ensure_ascii=False)
    except (TypeError, ValueError):
        # Not JSON-serialisable: record what was given; the sandbox answers invalid_json.
        return repr(arguments)
