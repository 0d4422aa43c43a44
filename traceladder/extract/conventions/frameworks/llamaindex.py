"""LlamaIndex agent workflows traced by OpenLLMetry's `opentelemetry-instrumentation-llamaindex`
(docs/conventions.md, "LlamaIndex").

That instrumentation makes no LLM span for `llama-index-llms-openai`: every workflow step is a
`traceloop.span.kind=task` span `BaseWorkflowAgent.task` whose `traceloop.entity.output` is the
step's result as **JSON**. The model step's result is `{"response": {"role": "assistant",
"additional_kwargs": {"tool_calls": [{id, function: {name, arguments}}]}}, …}` — the model's calls
with their ids and argument text, read as that step's response. The `call_tool` step carries
`tool.name`, `tool.arguments` (the parsed arguments, re-serialised) and, in its output, `tool_id`
and `tool_output` (`blocks` text, `is_error`): read as the execution of that call.
"""

from __future__ import annotations

from typing import Any, Final

from traceladder.extract.conventions.attribute_values import (
    ABSENT,
    ARGS_EVENT,
    ARGS_STRUCTURED,
    args_rank_of,
    as_dict,
    as_list,
    loads,
    name_text,
)
from traceladder.extract.conventions.base import LLM, TOOL, Convention, Role
from traceladder.extract.conventions.sightings import Execution, Sighting, sighting
from traceladder.extract.conventions.views import SpanView

NAME: Final = "llamaindex"
_KIND: Final = "traceloop.span.kind"
_ENTITY: Final = "traceloop.entity.name"
_OUTPUT: Final = "traceloop.entity.output"
_STEP: Final = "BaseWorkflowAgent.task"


def _step(attrs: dict[str, Any]) -> bool:
    return attrs.get(_KIND) == "task" and attrs.get(_ENTITY) == _STEP


def _response(attrs: dict[str, Any]) -> dict[str, Any] | None:
    """The model step's `response` message, when the step's output is one with tool calls."""
    output = attrs.get(_OUTPUT)
    if not isinstance(output, str) or not output.startswith('{"response"') or '"tool_calls"' not in output:
        return None
    return as_dict((as_dict(loads(output)) or {}).get("response"))


def response_calls(attrs: dict[str, Any]) -> list[Sighting]:
    message = _response(attrs)
    kwargs = as_dict((message or {}).get("additional_kwargs")) or {}
    out = []
    for call in as_list(kwargs.get("tool_calls")) or ():
        call = as_dict(call)
        function = as_dict((call or {}).get("function"))
        if call is None or function is None:
            continue
        args = function.get("arguments", ABSENT)
        out.append(
            sighting(
                name_text(function.get("name")),
                name_text(call.get("id")),
                args,
                args_rank_of(args, ARGS_EVENT),
                NAME,
                None,
            )
        )
    return out


def _blocks_text(output: dict[str, Any]) -> str | None:
    blocks = as_list(output.get("blocks")) or []
    texts = [b["text"] for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str)]
    return "".join(texts) if texts else None


class LlamaIndex(Convention):
    name = NAME
    precedence = 25
    markers = frozenset({_OUTPUT, "tool.arguments"})

    def role(self, span: SpanView) -> Role | None:
        attrs = span.attributes
        if not _step(attrs):
            return None
        if "tool.name" in attrs:
            return TOOL
        return LLM if _response(attrs) is not None else None

    def response_calls(self, span: SpanView) -> list[Sighting]:
        return response_calls(span.attributes) if _step(span.attributes) else []

    def execution(self, span: SpanView) -> Execution | None:
        attrs = span.attributes
        output = as_dict(loads(attrs.get(_OUTPUT))) or {}
        result = as_dict(output.get("tool_output")) or {}
        args = attrs.get("tool.arguments", ABSENT)
        failed = result.get("is_error") is True
        return Execution(
            span.span_id, span.parent_span_id, span.start_ns, span.end_ns, name_text(attrs.get("tool.name")),
            name_text(output.get("tool_id")) or None, args,
            # the parsed kwargs re-serialised, never the model's text
            args_rank_of(args, ARGS_STRUCTURED),
            _blocks_text(result), failed, "ToolError" if failed else None, NAME,
        )  # fmt: skip


CONVENTION = LlamaIndex()
