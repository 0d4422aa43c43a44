"""The agent loop for one case: model ⇄ sandbox until a text answer, every step a GenAI span.

Span tree (DESIGN §3): `invoke_agent {agent}` ▸ `chat {model}` per request ▸ `execute_tool {tool}`
per executed call. An exhausted retry, the case deadline or MAX_STEPS end the case as an agent
error recorded on the invoke_agent span; nothing here raises into the batch.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import openai
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer, use_span

from traceladder.agent.config import AgentConfig
from traceladder.agent.messages import (
    ToolCallRequest,
    assistant_message,
    dumps,
    normalize_tool_calls,
    otel_messages,
    otel_output,
    otel_tool_definitions,
)
from traceladder.agent.retry import ModelCallError, call_with_retry
from traceladder.cases.model import Case
from traceladder.domain.base import Domain, Sandbox
from traceladder.instrumentation import semconv as sc

AGENT_NAME = "traceladder-agent"


@dataclass(frozen=True)
class Endpoint:
    """Who we talk to, as recorded on spans (never the key)."""

    provider: str
    host: str
    port: int | None


@dataclass(frozen=True)
class AgentOutcome:
    trace_id: str
    status: str  # ok | error
    error_type: str | None
    error_message: str | None
    steps: int
    final_text: str | None
    input_tokens: int
    output_tokens: int
    latency_ms: float


@dataclass
class _Totals:
    steps: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


class AgentError(Exception):
    def __init__(self, error_type: str, message: str) -> None:
        super().__init__(message)
        self.error_type = error_type


def run_case(
    case: Case,
    *,
    domain: Domain,
    sandbox: Sandbox,
    client: openai.OpenAI,
    config: AgentConfig,
    endpoint: Endpoint,
    tracer: Tracer,
    run_id: str,
    repeat_index: int = 0,
    clock: Callable[[], int] = time.time_ns,
) -> AgentOutcome:
    """Run one case to its end and return what happened (the spans carry the details)."""
    started = time.monotonic()
    totals = _Totals()
    conversation = f"{run_id}/{case.id}/{repeat_index}"
    attrs = {
        sc.OPERATION_NAME: sc.OP_INVOKE_AGENT,
        sc.PROVIDER_NAME: endpoint.provider,
        sc.AGENT_NAME: AGENT_NAME,
        sc.CONVERSATION_ID: conversation,
        sc.REQUEST_MODEL: config.model,
        sc.RUN_ID: run_id,
        sc.CASE_ID: case.id,
        sc.CASE_DIMENSION: case.dimension,
        sc.CASE_REPEAT: repeat_index,
    }
    with _span(tracer, f"invoke_agent {AGENT_NAME}", SpanKind.INTERNAL, attrs, clock) as agent:
        trace_id = format(agent.get_span_context().trace_id, "032x")
        status, error_type, error_message, final_text = "ok", None, None, None
        try:
            session = _Session(
                domain, sandbox, client, config, endpoint, tracer, conversation, clock,
                deadline=started + config.case_timeout_s,
            )  # fmt: skip
            final_text = _converse(case, session, totals)
        except AgentError as exc:
            status, error_type, error_message = "error", exc.error_type, str(exc)
            agent.set_status(Status(StatusCode.ERROR, str(exc)))
            agent.set_attribute(sc.ERROR_TYPE, exc.error_type)
        agent.set_attribute(sc.AGENT_STATUS, status)
        agent.set_attribute(sc.AGENT_STEPS, totals.steps)
        agent.set_attribute(sc.USAGE_INPUT_TOKENS, totals.input_tokens)
        agent.set_attribute(sc.USAGE_OUTPUT_TOKENS, totals.output_tokens)
    return AgentOutcome(
        trace_id, status, error_type, error_message, totals.steps, final_text,
        totals.input_tokens, totals.output_tokens, (time.monotonic() - started) * 1000,
    )  # fmt: skip


@dataclass(frozen=True)
class _Session:
    """What one case's conversation needs, passed as one value."""

    domain: Domain
    sandbox: Sandbox
    client: openai.OpenAI
    config: AgentConfig
    endpoint: Endpoint
    tracer: Tracer
    conversation: str
    clock: Callable[[], int]
    deadline: float


def _converse(case: Case, session: _Session, totals: _Totals) -> str:
    s = session
    domain, sandbox, client, config, endpoint, tracer, conversation, clock, deadline = (
        s.domain, s.sandbox, s.client, s.config, s.endpoint, s.tracer, s.conversation, s.clock, s.deadline,
    )  # fmt: skip
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": domain.system_prompt},
        {"role": "user", "content": case.instruction},
    ]
    tools = list(domain.tools)
    definitions = dumps(otel_tool_definitions(domain.tools))
    descriptions = {t["function"]["name"]: t["function"].get("description", "") for t in domain.tools}
    seen_ids: set[str] = set()
    for step in range(1, config.max_steps + 1):
        if time.monotonic() >= deadline:
            raise AgentError(
                "timeout", f"case timeout of {config.case_timeout_s}s reached before step {step}"
            )
        totals.steps = step
        chat_attrs: dict[str, Any] = {
            sc.OPERATION_NAME: sc.OP_CHAT,
            sc.PROVIDER_NAME: endpoint.provider,
            sc.REQUEST_MODEL: config.model,
            sc.SERVER_ADDRESS: endpoint.host,
            sc.CONVERSATION_ID: conversation,
        }
        if endpoint.port is not None:
            chat_attrs[sc.SERVER_PORT] = endpoint.port
        with _span(tracer, f"chat {config.model}", SpanKind.CLIENT, chat_attrs, clock) as chat:
            chat.set_attribute(sc.REQUEST_TEMPERATURE, config.temperature)
            chat.set_attribute(sc.INPUT_MESSAGES, dumps(otel_messages(messages)))
            chat.set_attribute(sc.TOOL_DEFINITIONS, definitions)

            def request() -> Any:
                timeout = max(0.1, min(config.request_timeout_s, deadline - time.monotonic()))
                return client.chat.completions.create(
                    model=config.model, messages=messages, tools=tools,  # type: ignore[arg-type]
                    temperature=config.temperature, timeout=timeout,
                )  # fmt: skip

            try:
                response, _ = call_with_retry(request, config.retry, deadline=deadline)
            except ModelCallError as exc:
                chat.set_status(Status(StatusCode.ERROR, str(exc)))
                chat.set_attribute(sc.ERROR_TYPE, exc.error_type)
                kind = "timeout" if exc.error_type == "timeout" else "api_error"
                raise AgentError(kind, str(exc)) from None
            if time.monotonic() > deadline:  # an in-process or slow server can overrun the request timeout
                late = f"case timeout of {config.case_timeout_s}s passed during step {step}"
                chat.set_status(Status(StatusCode.ERROR, late))
                chat.set_attribute(sc.ERROR_TYPE, "timeout")
                raise AgentError("timeout", late)
            choice = response.choices[0] if response.choices else None
            message = getattr(choice, "message", None)
            content = getattr(message, "content", None)
            calls = normalize_tool_calls(getattr(message, "tool_calls", None), step, seen_ids)
            finish = getattr(choice, "finish_reason", None)
            _record_response(chat, response, content, calls, finish, totals)
        messages.append(assistant_message(content, calls))
        if not calls:  # whatever the finish_reason says, no calls means the answer is final
            return content or ""
        for call in calls:
            messages.append(_execute(call, sandbox, tracer, conversation, descriptions, clock))
    raise AgentError("max_steps", f"MAX_STEPS={config.max_steps} reached without a final answer")


def _record_response(
    chat: Span,
    response: Any,
    content: str | None,
    calls: list[ToolCallRequest],
    finish: str | None,
    totals: _Totals,
) -> None:
    usage = getattr(response, "usage", None)
    tokens_in = int(getattr(usage, "prompt_tokens", 0) or 0)
    tokens_out = int(getattr(usage, "completion_tokens", 0) or 0)
    totals.input_tokens += tokens_in
    totals.output_tokens += tokens_out
    chat.set_attribute(sc.RESPONSE_MODEL, str(getattr(response, "model", "") or ""))
    chat.set_attribute(sc.RESPONSE_ID, str(getattr(response, "id", "") or ""))
    chat.set_attribute(sc.RESPONSE_FINISH_REASONS, [finish or ""])
    chat.set_attribute(sc.USAGE_INPUT_TOKENS, tokens_in)
    chat.set_attribute(sc.USAGE_OUTPUT_TOKENS, tokens_out)
    chat.set_attribute(sc.OUTPUT_MESSAGES, dumps(otel_output(content, calls, finish)))


def _execute(
    call: ToolCallRequest,
    sandbox: Sandbox,
    tracer: Tracer,
    conversation: str,
    descriptions: dict[str, str],
    clock: Callable[[], int],
) -> dict[str, Any]:
    attrs: dict[str, Any] = {
        sc.OPERATION_NAME: sc.OP_EXECUTE_TOOL,
        sc.TOOL_NAME: call.name,
        sc.TOOL_CALL_ID: call.call_id,
        sc.TOOL_TYPE: "function",
        sc.CONVERSATION_ID: conversation,
        # The model's raw text, even when it is not valid JSON: that is evidence for rung 1.
        sc.TOOL_CALL_ARGUMENTS: call.raw_arguments,
    }
    if call.name in descriptions:
        attrs[sc.TOOL_DESCRIPTION] = descriptions[call.name]
    with _span(tracer, f"execute_tool {call.name}", SpanKind.INTERNAL, attrs, clock) as span:
        outcome = sandbox.execute(call.name, call.raw_arguments)
        result = dumps(outcome.result)
        if outcome.ok:
            span.set_attribute(sc.TOOL_CALL_RESULT, result)
        else:
            span.set_status(Status(StatusCode.ERROR, outcome.result["error"]["message"]))
            span.set_attribute(sc.ERROR_TYPE, outcome.error_type or "_OTHER")
            span.set_attribute(sc.TOOL_ERROR, result)
    return {"role": "tool", "tool_call_id": call.call_id, "content": result}


@contextmanager
def _span(
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
