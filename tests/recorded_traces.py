"""OTLP/JSON files of a small OTel GenAI agent, for recording suites from traces in tests.

`trace_body(...)` builds one trace as an instrumented agent would send it: an `invoke_agent` root,
one `chat` span per model turn (the user's request in `gen_ai.input.messages`, the calls it asked
for in `gen_ai.output.messages`, the tool list in `gen_ai.tool.definitions`) and one
`execute_tool` span per call with its raw arguments and result. `write_traces` writes a file that
`traceladder ingest` loads.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

TOOLS: list[dict[str, Any]] = [
    {"type": "function", "name": "get_order", "description": "Look an order up by its id.",
     "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                    "required": ["order_id"], "additionalProperties": False}},
    {"type": "function", "name": "get_status", "description": "The status of a job.",
     "parameters": {"type": "object", "properties": {"job_id": {"type": "string"}},
                    "required": ["job_id"], "additionalProperties": False}},
]  # fmt: skip

# (tool, raw argument text, result text, ok)
Call = tuple[str, str, str, bool]


def _attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, int) and not isinstance(value, bool):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value if isinstance(value, str) else json.dumps(value)}}


def trace_spans(number: int, request: str | None, calls: list[Call], tools: list[dict[str, Any]] | None = None
                ) -> list[dict[str, Any]]:  # fmt: skip
    tid = f"{number:032x}"
    root = f"{number:08x}00000001"
    clock = 1_796_000_000_000_000_000 + number * 1_000_000_000
    spans: list[dict[str, Any]] = []

    def span(
        sid: int, name: str, attrs: dict[str, Any], parent: str | None = root, error: bool = False
    ) -> None:
        spans.append({
            "traceId": tid, "spanId": f"{number:08x}{sid:08x}", "parentSpanId": parent or "", "name": name,
            "kind": 1, "startTimeUnixNano": str(clock + sid * 1000), "endTimeUnixNano": str(clock + sid * 1000 + 500),
            "attributes": [_attr(k, v) for k, v in attrs.items()], "status": {"code": 2} if error else {}, "flags": 256,
        })  # fmt: skip

    span(1, "invoke_agent shop", {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "shop"}, None)
    history: list[dict[str, Any]] = (
        [{"role": "user", "parts": [{"type": "text", "content": request}]}] if request else []
    )
    sid = 2
    for index in range(len(calls) + 1):
        tool, raw, result, ok = calls[index] if index < len(calls) else (None, "", "", True)
        chat: dict[str, Any] = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "shop-model",
                                "gen_ai.tool.definitions": tools if tools is not None else TOOLS}  # fmt: skip
        if history:
            chat["gen_ai.input.messages"] = history
        if tool is None:
            output = [
                {
                    "role": "assistant",
                    "parts": [{"type": "text", "content": "Done."}],
                    "finish_reason": "stop",
                }
            ]
        else:
            try:
                arguments: Any = json.loads(raw)
            except ValueError:
                arguments = raw
            part = {"type": "tool_call", "id": f"call_{index}", "name": tool, "arguments": arguments}
            output = [{"role": "assistant", "parts": [part], "finish_reason": "tool_calls"}]
        chat["gen_ai.output.messages"] = output
        span(sid, "chat shop-model", chat)
        sid += 1
        if tool is None:
            break
        execution = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool,
                     "gen_ai.tool.call.id": f"call_{index}", "gen_ai.tool.call.arguments": raw}  # fmt: skip
        if ok:
            execution["gen_ai.tool.call.result"] = result
        else:
            execution["error.type"] = "tool_error"
        span(sid, f"execute_tool {tool}", execution, error=not ok)
        sid += 1
        history = [*history, *output, {"role": "tool", "parts": [{"type": "tool_call_response", "id": f"call_{index}",
                                                                   "response": result}]}]  # fmt: skip
    return spans


def write_traces(
    path: Path, traces: list[list[dict[str, Any]]], service: str = "shop", version: str = "1.0"
) -> Path:
    resource = {"attributes": [_attr("service.name", service), _attr("service.version", version)]}
    body = {"resourceSpans": [{"resource": resource, "scopeSpans": [
        {"scope": {"name": "shop.agent"}, "spans": [s for t in traces for s in t]}]}]}  # fmt: skip
    path.write_text(json.dumps(body))
    return path
