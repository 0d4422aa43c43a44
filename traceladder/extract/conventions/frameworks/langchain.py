"""LangChain and LangGraph, traced by `openinference-instrumentation-langchain` or OpenLLMetry's
`opentelemetry-instrumentation-langchain` (docs/conventions.md, "LangGraph / LangChain").

What the base conventions would misread:
* **Calls whose arguments do not parse** go to the AIMessage's `invalid_tool_calls` and vanish from
  the flattened messages (OpenInference) or from `gen_ai.output.messages` (OpenLLMetry): they live
  only in serialized output — the LLM span's `output.value` (OpenInference) or the wrapping
  `execute_task` span's `gen_ai.task.output` (OpenLLMetry). Their `args` is the model's text.
* **Tool spans record envelopes**, not arguments: OpenLLMetry's `gen_ai.tool.call.arguments` is
  the callback payload `{"input_str": "<python repr>", "tags", "metadata", "inputs": {…}, "kwargs":
  {"tool_call_id"}}` (unwrapped to `inputs`, and the id taken from `kwargs`); its result is a
  serialized ToolMessage (unwrapped to its `content`), as is OpenInference's `output.value`
  (`{"type": "tool", "data": {"content", "tool_call_id"}}`). OpenInference's `input.value` of a
  one-argument tool is the bare value (`Paris`): not an argument object, so not used.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Final

from traceladder.extract.conventions import otel_genai as og
from traceladder.extract.conventions.attribute_values import (
    ABSENT,
    ARGS_OPENINFERENCE,
    ARGS_STRUCTURED,
    args_rank_of,
    as_dict,
    as_list,
    loads,
    name_text,
    text,
)
from traceladder.extract.conventions.base import Convention
from traceladder.extract.conventions.sightings import Execution, Sighting, sighting
from traceladder.extract.conventions.views import SpanView

OPENINFERENCE_SCOPE: Final = "openinference.instrumentation.langchain"
OPENLLMETRY_SCOPE: Final = "opentelemetry.instrumentation.langchain"
NAME: Final = "langchain"
TASK_OUTPUT: Final = "gen_ai.task.output"
_INVALID = '"invalid_tool_calls": [{'


def _ai_messages(value: Any) -> list[dict[str, Any]]:
    """Every serialized AIMessage's kwargs in a LangChain output (LLMResult generations, graph
    updates), found by walking the JSON; LangChain serializes a message as {"lc", "type":
    "constructor", "id": [..., "AIMessage"], "kwargs": {...}} or as {"type": "ai", "data": {...}}."""
    found: list[dict[str, Any]] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            ids = item.get("id")
            if isinstance(ids, list) and ids and ids[-1] in ("AIMessage", "AIMessageChunk"):
                kwargs = as_dict(item.get("kwargs"))
                if kwargs is not None:
                    found.append(kwargs)
                    continue
            if item.get("type") == "ai" and isinstance(item.get("data"), dict):
                found.append(item["data"])
                continue
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))
    return found


def message_calls(message: dict[str, Any]) -> list[Sighting]:
    """An AIMessage's calls: the parsed `tool_calls` (arguments re-serialised by LangChain), then
    the `invalid_tool_calls` (arguments the model's text)."""
    out = []
    for call in as_list(message.get("tool_calls")) or ():
        call = as_dict(call) or {}
        args = call.get("args", ABSENT)
        out.append(sighting(name_text(call.get("name")), name_text(call.get("id")), args,
                            args_rank_of(args, ARGS_STRUCTURED), NAME, None))  # fmt: skip
    for call in as_list(message.get("invalid_tool_calls")) or ():
        call = as_dict(call) or {}
        args = call.get("args", ABSENT)
        out.append(sighting(name_text(call.get("name")), name_text(call.get("id")), args,
                            args_rank_of(args, ARGS_OPENINFERENCE), NAME, None))  # fmt: skip
    return out


def _invalid_calls(value: Any) -> list[Sighting]:
    """The calls of the last AIMessage of a serialized output that has invalid calls; [] when
    none has (the flattened attributes already hold every valid call)."""
    if not isinstance(value, str) or _INVALID not in value:
        return []
    messages = [m for m in _ai_messages(loads(value)) if as_list(m.get("invalid_tool_calls"))]
    return message_calls(messages[-1]) if messages else []


def _tool_message_content(value: Any) -> tuple[str | None, str | None] | None:
    """(content, tool_call_id) of a serialized ToolMessage, or None when `value` is not one."""
    parsed = as_dict(value)
    if parsed is None:
        return None
    if parsed.get("type") == "tool" and isinstance(parsed.get("data"), dict):
        data = parsed["data"]
    else:
        output = as_dict(parsed.get("output"))
        data = as_dict(output.get("kwargs")) if output is not None else None
        if data is None or "content" not in data:
            return None
    return text(data.get("content")), name_text(data.get("tool_call_id"))


class LangChain(Convention):
    name = NAME
    precedence = 5
    scopes = frozenset({OPENINFERENCE_SCOPE, OPENLLMETRY_SCOPE})

    # role: the base conventions decide; this one only re-reads their spans

    def response_calls(self, span: SpanView) -> list[Sighting]:
        if span.scope_name == OPENINFERENCE_SCOPE:
            return _invalid_calls(span.attributes.get("output.value"))
        return []

    def carried_calls(self, span: SpanView) -> list[Sighting]:
        if span.scope_name == OPENLLMETRY_SCOPE and span.attributes.get(og.OPERATION) == "execute_task":
            return _invalid_calls(span.attributes.get(TASK_OUTPUT))
        return []

    def refine_execution(self, span: SpanView, execution: Execution) -> Execution:
        """Unwraps the envelopes LangChain's callbacks put where the arguments and result belong."""
        if span.scope_name not in (OPENINFERENCE_SCOPE, OPENLLMETRY_SCOPE):
            return execution
        args, call_id, result = execution.args, execution.call_id, execution.result
        payload = as_dict(args)
        if payload is not None and "input_str" in payload:  # OpenLLMetry's callback payload
            inputs = payload.get("inputs")
            args = inputs if isinstance(inputs, dict) else ABSENT
            call_id = call_id or name_text((as_dict(payload.get("kwargs")) or {}).get("tool_call_id"))
        elif span.scope_name == OPENINFERENCE_SCOPE and payload is None:
            args = ABSENT  # a one-argument tool's bare value: not the argument object
        message = _tool_message_content(result)
        if message is not None:
            result, call_id = message[0], call_id or message[1]
        if (args, call_id, result) == (execution.args, execution.call_id, execution.result):
            return execution
        return replace(
            execution, args=args, args_rank=args_rank_of(args, ARGS_STRUCTURED), call_id=call_id or None,
            result=result, _canon=None,
        )  # fmt: skip


CONVENTION = LangChain()
