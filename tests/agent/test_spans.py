"""The exact span tree for one D4 chain: deterministic ids, a fixed clock, every attribute pinned."""

from __future__ import annotations

import itertools
import json
import re

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator

from traceladder.produce.agent.client import build_client, choose_model
from traceladder.produce.agent.config import AgentConfig
from traceladder.produce.agent.loop import run_case
from traceladder.suite.cases import load_cases


class SequentialIds(IdGenerator):
    def __init__(self) -> None:
        self.traces = itertools.count(0xABC1)
        self.spans = itertools.count(0x11)

    def generate_trace_id(self) -> int:
        return next(self.traces)

    def generate_span_id(self) -> int:
        return next(self.spans)


def run_chain(retail):
    cases = load_cases()
    case = next(c for c in cases if c.id == "fc-d4-001")
    memory = InMemorySpanExporter()
    provider = TracerProvider(id_generator=SequentialIds())
    provider.add_span_processor(SimpleSpanProcessor(memory))
    config = AgentConfig(model="sim:oracle")
    client, endpoint, _ = build_client(choose_model("sim:oracle", None), config, cases, retail)
    ticks = itertools.count(1_000_000_000, 1000)
    outcome = run_case(
        case, domain=retail, sandbox=retail.new_sandbox(), client_factory=client, config=config,
        endpoint=endpoint, tracer=provider.get_tracer("test"), run_id="run-1", clock=lambda: next(ticks),
    )  # fmt: skip
    return outcome, memory.get_finished_spans()


def test_d4_chain_span_tree_is_exact(retail):
    outcome, spans = run_chain(retail)
    assert outcome.status == "ok" and outcome.steps == 3
    assert outcome.trace_id == "0000000000000000000000000000abc1"
    tree = [
        (s.name, s.kind.name, format(s.context.span_id, "x"), s.parent and format(s.parent.span_id, "x"),
         s.start_time, s.end_time, s.status.status_code.name)
        for s in spans
    ]  # fmt: skip
    assert tree == [
        ("chat sim:oracle", "CLIENT", "12", "11", 1_000_001_000, 1_000_002_000, "UNSET"),
        (
            "execute_tool request_cancel",
            "INTERNAL",
            "13",
            "11",
            1_000_003_000,
            1_000_004_000,
            "UNSET",
        ),
        ("chat sim:oracle", "CLIENT", "14", "11", 1_000_005_000, 1_000_006_000, "UNSET"),
        (
            "execute_tool confirm_action",
            "INTERNAL",
            "15",
            "11",
            1_000_007_000,
            1_000_008_000,
            "UNSET",
        ),
        ("chat sim:oracle", "CLIENT", "16", "11", 1_000_009_000, 1_000_010_000, "UNSET"),
        (
            "invoke_agent traceladder-agent",
            "INTERNAL",
            "11",
            None,
            1_000_000_000,
            1_000_011_000,
            "UNSET",
        ),
    ]
    chat1, tool1, chat2, tool2, chat3, agent = (dict(s.attributes) for s in spans)
    conv = agent["gen_ai.conversation.id"]  # RUN/CASE/REPEAT/ATTEMPT, the attempt a fresh token
    assert re.fullmatch(r"run-1/fc-d4-001/0/[0-9a-f]{8}", conv)
    assert agent == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.provider.name": "traceladder.sim",
        "gen_ai.agent.name": "traceladder-agent",
        "gen_ai.conversation.id": conv,
        "gen_ai.request.model": "sim:oracle",
        "traceladder.run.id": "run-1",
        "traceladder.domain": "retail",
        "traceladder.case.id": "fc-d4-001",
        "traceladder.case.dimension": "D4",
        "traceladder.case.repeat": 0,
        "traceladder.agent.status": "ok",
        "traceladder.agent.steps": 3,
        "traceladder.sandbox.ledger": '[{"action_id": "ACT-001", "arguments": {"order_id": "W442", "reason": "changed_mind"}, "status": "confirmed", "tool": "request_cancel"}]',
        "gen_ai.usage.input_tokens": 1005,
        "gen_ai.usage.output_tokens": 113,
    }
    assert tool1 == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "request_cancel",
        "gen_ai.tool.call.id": "call_0_0",
        "gen_ai.tool.type": "function",
        "gen_ai.conversation.id": conv,
        "gen_ai.tool.call.arguments": '{"order_id": "W442", "reason": "changed_mind"}',
        "gen_ai.tool.description": (
            "Request cancellation of a pending order. Creates a pending action that must be confirmed."
        ),
        "gen_ai.tool.call.result": (
            '{"action_id":"ACT-001","status":"pending_confirmation","action":"request_cancel",'
            '"message":"Pending. Call confirm_action to execute or abort_action to withdraw."}'
        ),
    }
    assert tool2["gen_ai.tool.call.arguments"] == '{"action_id": "ACT-001"}'
    assert tool2["gen_ai.tool.call.result"] == (
        '{"action_id":"ACT-001","status":"confirmed","action":"request_cancel"}'
    )
    common = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "traceladder.sim",
        "gen_ai.request.model": "sim:oracle",
        "server.address": "sim.traceladder.invalid",
        "gen_ai.conversation.id": conv,
        "gen_ai.request.temperature": 0.0,
        "gen_ai.request.max_tokens": 2048,
        "gen_ai.response.model": "sim:oracle",
    }
    definitions = json.loads(chat1.pop("gen_ai.tool.definitions"))
    assert [d["name"] for d in definitions] == list(retail.tool_names)
    assert set(definitions[0]) == {"type", "name", "description", "parameters"}  # flat, not nested
    inputs = json.loads(chat2.pop("gen_ai.input.messages"))
    assert [m["role"] for m in inputs] == ["system", "user", "assistant", "tool"]
    assert inputs[1]["parts"] == [
        {
            "type": "text",
            "content": "我改变主意了，请取消订单W442，原因是改变主意，并直接确认执行。",
        }
    ]
    assert inputs[2]["parts"] == [
        {"type": "tool_call", "id": "call_0_0", "name": "request_cancel",
         "arguments": {"order_id": "W442", "reason": "changed_mind"}},
    ]  # fmt: skip
    assert inputs[3]["parts"][0]["type"] == "tool_call_response" and inputs[3]["parts"][0]["id"] == "call_0_0"
    chat1.pop("gen_ai.input.messages")
    assert chat1 == {
        **common,
        "gen_ai.response.id": "chatcmpl-sim-1",
        "gen_ai.response.finish_reasons": ("tool_calls",),
        "gen_ai.usage.input_tokens": 302,
        "gen_ai.usage.output_tokens": 51,
        "gen_ai.output.messages": (
            '[{"role":"assistant","parts":[{"type":"tool_call","id":"call_0_0","name":"request_cancel",'
            '"arguments":{"order_id":"W442","reason":"changed_mind"}}],"finish_reason":"tool_calls"}]'
        ),
    }
    for key in ("gen_ai.input.messages", "gen_ai.tool.definitions"):
        chat3.pop(key)
    assert chat3 == {
        **common,
        "gen_ai.response.id": "chatcmpl-sim-3",
        "gen_ai.response.finish_reasons": ("stop",),
        "gen_ai.usage.input_tokens": 360,
        "gen_ai.usage.output_tokens": 18,
        "gen_ai.output.messages": (
            '[{"role":"assistant","parts":[{"type":"text","content":"操作ACT-001（request_cancel）状态：confirmed。"}],'
            '"finish_reason":"stop"}]'
        ),
    }


def test_failed_tool_call_is_an_error_span_with_raw_arguments(retail):
    from traceladder.produce.agent.messages import ToolCallRequest
    from traceladder.produce.agent.tool_execution import execute_tool_call

    memory = InMemorySpanExporter()
    provider = TracerProvider(id_generator=SequentialIds())
    provider.add_span_processor(SimpleSpanProcessor(memory))
    call = ToolCallRequest("call_1", "get_order", '{"order_id": "W441"', False)
    message = execute_tool_call(call, retail.new_sandbox(), provider.get_tracer("t"), "c", {}, lambda: 1)
    (span,) = memory.get_finished_spans()
    assert span.status.status_code.name == "ERROR"
    assert span.attributes["error.type"] == "invalid_json"
    assert span.attributes["gen_ai.tool.call.arguments"] == '{"order_id": "W441"'
    assert "gen_ai.tool.call.result" not in span.attributes
    assert json.loads(message["content"])["error"]["type"] == "invalid_json"
