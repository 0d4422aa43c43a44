"""Reads a tool execution out of one span's flat attributes, whatever convention produced it.

Returns the materialised columns the store keeps next to `attributes`: operation, tool name,
call id, raw argument text, result text, error type and the convention. Malformed argument strings
are kept raw — invalid JSON from a model is evidence, not something to repair.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from traceladder.instrumentation import semconv as sc


class ToolColumns(NamedTuple):
    operation: str | None
    tool_name: str | None
    tool_call_id: str | None
    tool_arguments: str | None
    tool_result: str | None
    error_type: str | None
    convention: str | None


def _text(value: Any) -> str | None:
    """Structured values become JSON text; strings stay exactly as recorded."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


_NOT_A_TOOL = frozenset({sc.OP_CHAT, sc.OP_INVOKE_AGENT, "text_completion", "generate_content"})


def tool_columns(attrs: dict[str, Any]) -> ToolColumns:
    operation = attrs.get(sc.OPERATION_NAME)
    if operation in _NOT_A_TOOL:  # the common case on the hot path
        return ToolColumns(operation, None, None, None, None, _text(attrs.get(sc.ERROR_TYPE)), None)
    error_type = _text(attrs.get(sc.ERROR_TYPE))
    if attrs.get("openinference.span.kind") == "TOOL":
        return ToolColumns(
            sc.OP_EXECUTE_TOOL,
            _text(attrs.get("tool.name")),
            _text(attrs.get("tool.id", attrs.get("tool_call.id"))),
            _text(attrs.get("input.value", attrs.get("tool.parameters"))),
            _text(attrs.get("output.value")),
            error_type,
            "openinference",
        )
    if attrs.get("traceloop.span.kind") == "tool":
        return ToolColumns(
            sc.OP_EXECUTE_TOOL,
            _text(attrs.get("traceloop.entity.name")),
            None,
            _text(_traceloop_kwargs(attrs.get("traceloop.entity.input"))),
            _text(attrs.get("traceloop.entity.output")),
            error_type,
            "openllmetry",
        )
    # OTel GenAI (after the other two: OpenLLMetry tool spans also set gen_ai.tool.name without an
    # operation name): detect by attributes, never by span name (MCP spans are "tools/call {tool}",
    # and some producers omit the operation name but set gen_ai.tool.name).
    if operation == sc.OP_EXECUTE_TOOL or (operation is None and sc.TOOL_NAME in attrs):
        result = attrs.get(sc.TOOL_CALL_RESULT, attrs.get(sc.TOOL_ERROR))
        return ToolColumns(
            sc.OP_EXECUTE_TOOL,
            _text(attrs.get(sc.TOOL_NAME)),
            _text(attrs.get(sc.TOOL_CALL_ID)),
            _text(attrs.get(sc.TOOL_CALL_ARGUMENTS)),
            _text(result),
            error_type,
            "otel_genai",
        )
    return ToolColumns(_text(operation), None, None, None, None, error_type, None)


def _traceloop_kwargs(value: Any) -> Any:
    """OpenLLMetry records decorated tools' input as {"args": [...], "kwargs": {...}}."""
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return value
        if isinstance(parsed, dict) and set(parsed) <= {"args", "kwargs"} and not parsed.get("args"):
            return parsed.get("kwargs", {})
    return value
