"""A real instrumented retail agent for live-evaluation tests, run as a subprocess.

    python tests/live_agent.py --endpoint http://127.0.0.1:4318 --model-url http://127.0.0.1:PORT/v1 \
        --version 1.1 --service retail-agent --conversations 6 --seed 7

The real `openai` client, traced by the real `openinference-instrumentation-openai`, exported by the
real OTLP/HTTP protobuf exporter to `<endpoint>/v1/traces` (or to `--endpoint` as given when it
already ends in `/v1/traces`; `--token` adds `Authorization: Bearer …`). Resource: `service.name`,
`service.version`, `deployment.environment.name`.

Each conversation is its own trace: an OpenInference AGENT root span (OITracer,
`agent.name=<agent name>`), under it the LLM spans of the instrumentation and one TOOL span per
executed call (OITracer `set_tool` with the tool's JSON schema, raw argument string as input).
`using_attributes(session_id=…, metadata=…)` puts the conversation on every span of the trace.

ExchangeDetail numbers are `--first`, `--first`+1, …; the number is written into the user message
as `#N` (the scripted model in `scripted_live_model.LiveModel` decides by it). `--seed` picks the wording of each
question. The model name sent is `retail-<version>` unless `--model` says otherwise.

Prints one JSON line per conversation: {"conversation", "trace_id", "calls": [{"id", "name",
"arguments", "result", "error"}], "final_text"}. Exits 0 only when every conversation reached a text
answer and every export succeeded; 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Callable, Sequence
from typing import Any

SYSTEM_PROMPT = "You are a retail support agent. Use the tools to look orders up and act on them."
MAX_TURNS = 8
QUESTIONS = (
    "Where is my order W123?",
    "Can you check on order W123 for me?",
    "What's the status of W123? I may want to cancel it.",
    "Please look up my order W123.",
)

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_order",
            "description": "Look an order up by its id.",
            "strict": True,
            "parameters": {
                "type": "object",
                "properties": {
                    "order_id": {"type": "string", "pattern": "^W\\d+$", "description": "Order id, e.g. W123"}
                },
                "required": ["order_id"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "cancel_order",
            "description": "Request the cancellation of a pending order; returns an action to confirm.",
            "strict": True,
            "parameters": {
                "type": "object",
                "properties": {
                    "order_id": {"type": "string", "pattern": "^W\\d+$"},
                    "reason": {"type": "string", "enum": ["no_longer_needed", "ordered_by_mistake"]},
                },
                "required": ["order_id", "reason"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "confirm_action",
            "description": "Confirm a pending action by its id.",
            "strict": True,
            "parameters": {
                "type": "object",
                "properties": {"action_id": {"type": "string"}},
                "required": ["action_id"],
                "additionalProperties": False,
            },
        },
    },
]
TOOL_BY_NAME = {t["function"]["name"]: t["function"] for t in TOOLS}


# --- fake local tools (deterministic) ------------------------------------------------------------
ORDERS = {"W123": {"order_id": "W123", "status": "pending", "items": ["desk lamp"], "total": 39.9}}


def get_order(order_id: str) -> str:
    if order_id not in ORDERS:
        raise KeyError(f"no order {order_id!r}")
    return json.dumps(ORDERS[order_id])


def cancel_order(order_id: str, reason: str) -> str:
    if order_id not in ORDERS:
        raise KeyError(f"no order {order_id!r}")
    return json.dumps(
        {"action_id": f"act-{order_id}-cancel", "requires_confirmation": True, "reason": reason}
    )


def confirm_action(action_id: str) -> str:
    return json.dumps({"action_id": action_id, "status": "done"})


TOOL_IMPLS: dict[str, Callable[..., str]] = {
    "get_order": get_order,
    "cancel_order": cancel_order,
    "confirm_action": confirm_action,
}


def _execute(name: str, arguments: str) -> str:
    impl = TOOL_IMPLS.get(name)
    if impl is None:
        raise KeyError(f"unknown tool {name!r}")
    args = json.loads(arguments)
    if not isinstance(args, dict):
        raise TypeError("arguments must be a JSON object")
    return impl(**args)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--endpoint", required=True, help="OTLP/HTTP base URL (…/v1/traces is appended)")
    p.add_argument("--model-url", required=True, help="chat-completions base URL, e.g. http://127.0.0.1:P/v1")
    p.add_argument("--version", required=True, help="service.version, and the model version (1.0, 1.1)")
    p.add_argument("--service", default="retail-agent", help="service.name (default: retail-agent)")
    p.add_argument("--agent-name", default=None, help="agent.name on the AGENT span (default: --service)")
    p.add_argument("--environment", default="prod", help="deployment.environment.name (default: prod)")
    p.add_argument("--model", default=None, help="model name sent (default: retail-<version>)")
    p.add_argument("--conversations", type=int, default=1, help="how many conversations (default: 1)")
    p.add_argument("--first", type=int, default=0, help="number of the first conversation (default: 0)")
    p.add_argument("--seed", type=int, default=0, help="picks the wording of the questions (default: 0)")
    p.add_argument("--token", default=None, help="send `Authorization: Bearer TOKEN` with every export")
    return p.parse_args(argv)


def traces_url(endpoint: str) -> str:
    endpoint = endpoint.rstrip("/")
    return endpoint if endpoint.endswith("/v1/traces") else f"{endpoint}/v1/traces"


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    # Heavy imports here, so tests can import TOOLS and the fake tools cheaply.
    import openai
    from openinference.instrumentation import OITracer, TraceConfig, using_attributes
    from openinference.instrumentation.openai import OpenAIInstrumentor
    from openinference.semconv.trace import SpanAttributes
    from opentelemetry import context as otel_context
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
    from opentelemetry.trace import StatusCode

    class CheckedExporter(SpanExporter):
        """The real exporter, remembering whether any export failed (flush alone does not tell)."""

        def __init__(self, inner: SpanExporter) -> None:
            self.inner = inner
            self.failures = 0

        def export(self, spans: Any) -> SpanExportResult:
            result = self.inner.export(spans)
            if result is not SpanExportResult.SUCCESS:
                self.failures += 1
            return result

        def shutdown(self) -> None:
            self.inner.shutdown()

        def force_flush(self, timeout_millis: int = 30000) -> bool:
            return self.inner.force_flush(timeout_millis)

    resource = Resource.create(
        {
            "service.name": args.service,
            "service.version": args.version,
            "deployment.environment.name": args.environment,
        }
    )
    headers = {"Authorization": f"Bearer {args.token}"} if args.token else None
    exporter = CheckedExporter(
        OTLPSpanExporter(endpoint=traces_url(args.endpoint), headers=headers, timeout=10)
    )
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=200))
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    tracer = OITracer(provider.get_tracer("traceladder.tests.live_agent", "1.0"), config=TraceConfig())

    client = openai.OpenAI(base_url=args.model_url, api_key="test", max_retries=0, timeout=10)
    model = args.model or f"retail-{args.version}"
    agent_name = args.agent_name or args.service
    rng = random.Random(args.seed)
    completed = 0

    def run_tool(name: str, arguments: str) -> tuple[str, bool]:
        fn = TOOL_BY_NAME.get(name, {})
        try:  # the OITracer span records the exception and ends in ERROR
            with tracer.start_as_current_span(name, openinference_span_kind="tool") as span:
                span.set_tool(
                    name=name, description=fn.get("description"), parameters=fn.get("parameters") or {}
                )
                span.set_input(arguments, mime_type="application/json")
                output = _execute(name, arguments)
                span.set_output(output, mime_type="application/json")
                return output, False
        except Exception as exc:  # the agent reports the failure to the model
            return f"Error: {type(exc).__name__}: {exc}", True

    def converse(number: int, question: str) -> dict[str, Any]:
        record: dict[str, Any] = {"conversation": number, "calls": [], "final_text": None}
        user_text = f"{question} (conversation #{number})"
        with (
            using_attributes(session_id=f"{args.service}-{args.version}-{number}",
                             metadata={"conversation": number, "seed": args.seed}),
            tracer.start_as_current_span(
                agent_name, context=otel_context.Context(), openinference_span_kind="agent",
                attributes={SpanAttributes.AGENT_NAME: agent_name},
            ) as root,
        ):  # fmt: skip
            record["trace_id"] = format(root.get_span_context().trace_id, "032x")
            root.set_input(user_text)
            messages: list[dict[str, Any]] = [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": user_text},
            ]
            for _ in range(MAX_TURNS):
                response = client.chat.completions.create(model=model, messages=messages, tools=TOOLS)
                msg = response.choices[0].message
                tool_calls = msg.tool_calls or []
                if not tool_calls:
                    record["final_text"] = msg.content
                    root.set_output(msg.content)
                    return record
                messages.append(
                    {
                        "role": "assistant",
                        "content": msg.content,
                        "tool_calls": [
                            {
                                "id": tc.id,
                                "type": "function",
                                "function": {"name": tc.function.name, "arguments": tc.function.arguments},
                            }
                            for tc in tool_calls
                        ],
                    }
                )
                for tc in tool_calls:
                    output, error = run_tool(tc.function.name, tc.function.arguments)
                    record["calls"].append(
                        {"id": tc.id, "name": tc.function.name, "arguments": tc.function.arguments,
                         "result": output, "error": error}
                    )  # fmt: skip
                    messages.append({"role": "tool", "tool_call_id": tc.id, "content": output})
            root.set_status(StatusCode.ERROR, f"no final answer after {MAX_TURNS} turns")
            return record

    try:
        for i in range(args.conversations):
            number = args.first + i
            try:
                record = converse(number, rng.choice(QUESTIONS))
            except Exception as exc:
                print(
                    f"live_agent: conversation #{number} failed: {type(exc).__name__}: {exc}", file=sys.stderr
                )
                continue
            print(json.dumps(record), flush=True)
            if record["final_text"] is not None:
                completed += 1
    finally:
        client.close()
        flushed = provider.force_flush(timeout_millis=20_000)
        provider.shutdown()
        instrumentor.uninstrument()
    if not flushed or exporter.failures:
        print(f"live_agent: export incomplete (flushed={flushed}, failed exports={exporter.failures})",
              file=sys.stderr)  # fmt: skip
        return 1
    if completed != args.conversations:
        print(f"live_agent: {completed}/{args.conversations} conversations completed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
