"""The tool columns the store materialises next to a span's `attributes` (operation, tool name,
call id, raw argument text, result text, error type, convention), decided by the registry: the
convention that calls the span a tool span reads them. Malformed argument strings are kept raw —
invalid JSON from a model is evidence, not something to repair. The extraction
(`extract_trace`) never reads these columns; they are for SQL and the file-ingest fast path.
"""

from __future__ import annotations

from typing import Any

from traceladder.conventions import registry
from traceladder.conventions.attribute_values import text
from traceladder.conventions.base import TOOL, ToolColumns
from traceladder.conventions.otel_genai import ERROR_TYPE, OPERATION
from traceladder.conventions.views import SpanView

__all__ = ["ToolColumns", "tool_columns"]


def tool_columns(attrs: dict[str, Any]) -> ToolColumns:
    decided = registry.role_of(SpanView("", None, "", "", 0, 0, "UNSET", None, attrs, [], None))
    if decided is not None and decided[0] == TOOL:
        found = decided[1].tool_columns(attrs)
        if found is not None:
            return found
    return ToolColumns(text(attrs.get(OPERATION)), None, None, None, None, text(attrs.get(ERROR_TYPE)), None)
