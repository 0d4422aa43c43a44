"""Asking the judge: one call per distinct trajectory, concurrently, while the budget lasts.

Each call is a GenAI `chat` span in its own trace (service `traceladder.judge`), linked to the
first judged trace with that trajectory; the spans are collected for the store, never exported
elsewhere. The budget (calls or tokens) is checked before each call.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, NamedTuple

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags
from opentelemetry.util.types import AttributeValue

from traceladder import __version__
from traceladder.evaluate.judge.rubric import Prompt
from traceladder.evaluate.rungs.judge import CriterionVerdict
from traceladder.instrumentation import semconv as sc

if TYPE_CHECKING:
    from traceladder.evaluate.judge.client import Reply
    from traceladder.evaluate.judge.phase import JudgeOptions, PhaseResult

JUDGE_SERVICE = "traceladder.judge"

Replies = dict[tuple[str, str], tuple["Reply", str]]  # (prompt hash, trajectory hash) → reply, judge trace


class _Collect(SpanExporter):
    def __init__(self) -> None:
        self.spans: list[ReadableSpan] = []

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.spans.extend(spans)
        return SpanExportResult.SUCCESS


class Ask(NamedTuple):
    key: tuple[str, str]
    prompt: Prompt
    text: str
    first_trace: str
    root_span: str | None


def verdict_of(criteria: tuple[CriterionVerdict, ...]) -> str:
    return "fail" if any(c.verdict == "fail" for c in criteria) else "pass"


def ask_all(asks: list[Ask], options: JudgeOptions, out: PhaseResult) -> tuple[Replies, list[ReadableSpan]]:
    """Ask the judge for each distinct trajectory, concurrently, while the budget lasts."""
    if not asks:
        return {}, []
    collect = _Collect()
    provider = TracerProvider(
        resource=Resource.create({"service.name": JUDGE_SERVICE, "service.version": __version__}),
        shutdown_on_exit=False,
    )
    provider.add_span_processor(SimpleSpanProcessor(collect))
    tracer = provider.get_tracer("traceladder.judge")
    from traceladder.evaluate.judge.client import JudgeClient  # the OpenAI client library: only when asking

    client = JudgeClient(options.endpoint)
    budget, lock = options.budget, threading.Lock()
    replies: Replies = {}

    def allowed() -> bool:
        """Reserve one call if the budget has room (a token budget is checked before each call:
        calls already in flight may overrun it by at most `concurrency - 1` calls)."""
        with lock:
            if budget.calls is not None and out.calls >= budget.calls:
                return False
            if budget.tokens is not None and out.input_tokens + out.output_tokens >= budget.tokens:
                return False
            out.calls += 1
            return True

    def one(ask: Ask) -> None:
        if not allowed():
            return
        links = []
        if ask.root_span:
            context = SpanContext(
                int(ask.first_trace, 16),
                int(ask.root_span, 16),
                is_remote=True,
                trace_flags=TraceFlags(TraceFlags.SAMPLED),
            )
            links.append(Link(context, {sc.JUDGE_LINK: "judged_trace"}))
        attrs: dict[str, AttributeValue] = {
            sc.OPERATION_NAME: "chat",
            sc.PROVIDER_NAME: options.endpoint.provider,
            sc.REQUEST_MODEL: options.endpoint.model,
            sc.REQUEST_TEMPERATURE: 0.0,
            sc.REQUEST_SEED: 0,
            sc.JUDGE_PROMPT_HASH: ask.key[0],
            sc.JUDGE_TRAJECTORY_HASH: ask.key[1],
            sc.JUDGE_JUDGED_TRACE_ID: ask.first_trace,
            sc.JUDGE_RUBRIC_VERSION: options.rubric.version,
        }
        with tracer.start_as_current_span(
            f"chat {options.endpoint.model}", kind=SpanKind.CLIENT, attributes=attrs, links=links
        ) as span:
            reply = client.ask(ask.prompt, ask.text, options.rubric.codes)
            span.set_attribute(sc.USAGE_INPUT_TOKENS, reply.input_tokens)
            span.set_attribute(sc.USAGE_OUTPUT_TOKENS, reply.output_tokens)
            if reply.response_model:
                span.set_attribute(sc.RESPONSE_MODEL, reply.response_model)
            if reply.text is not None:
                message = [{"role": "assistant", "parts": [{"type": "text", "content": reply.text}]}]
                span.set_attribute(sc.OUTPUT_MESSAGES, json.dumps(message, ensure_ascii=False))
            if reply.criteria is None:
                span.set_status(Status(StatusCode.ERROR, reply.error or "judge error"))
                span.set_attribute(sc.ERROR_TYPE, "judge_error")
            else:
                span.set_attribute(sc.JUDGE_VERDICT, verdict_of(reply.criteria))
            judge_trace = format(span.get_span_context().trace_id, "032x")
        with lock:
            out.input_tokens += reply.input_tokens
            out.output_tokens += reply.output_tokens
            replies[ask.key] = (reply, judge_trace)

    try:
        with ThreadPoolExecutor(max_workers=max(1, options.concurrency), thread_name_prefix="judge") as pool:
            list(pool.map(one, asks))
    finally:
        client.close()
        provider.shutdown()
    return replies, collect.spans
