"""A convention plug-in, the way a package would ship one: one module and one entry point.

The "toy framework" writes each tool execution as a span with `toy.tool` (the tool's name),
`toy.args` (the model's argument text) and `toy.result`; nothing any built-in convention reads.
"""

from __future__ import annotations

from typing import Any

from traceladder.plugin_api.conventions import (
    ABSENT,
    ARGS_TOOL_SPAN,
    TOOL,
    Convention,
    Execution,
    Role,
    SpanView,
    args_rank_of,
    name_text,
    text,
)


class ToyFramework(Convention):
    name = "toyframework"
    precedence = 50
    markers = frozenset({"toy.tool"})
    role_sql = "CASE WHEN json_exists({attributes}, '$.\"toy.tool\"') THEN 'tool' END"
    tool_json_markers = ('"toy.tool"',)

    def role(self, span: SpanView) -> Role | None:
        return TOOL if "toy.tool" in span.attributes else None

    def execution(self, span: SpanView) -> Execution | None:
        attrs: dict[str, Any] = span.attributes
        args = attrs.get("toy.args", ABSENT)
        return Execution(
            span.span_id,
            span.parent_span_id,
            span.start_ns,
            span.end_ns,
            name_text(attrs.get("toy.tool")),
            None,
            args,
            args_rank_of(args, ARGS_TOOL_SPAN),
            text(attrs.get("toy.result")),
            span.status_code == "ERROR",
            None,
            self.name,
        )


CONVENTION = ToyFramework()
