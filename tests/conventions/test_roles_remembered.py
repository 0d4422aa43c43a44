"""A span's role is decided once per trace's extraction (`registry.roles_remembered`), and only
for the hooks and the very view it was decided for: other hooks, or another view of the span
(another copy, other attributes), decide again."""

from __future__ import annotations

from dataclasses import replace

from traceladder.extract.conventions import registry
from traceladder.extract.conventions.base import LLM, TOOL
from traceladder.extract.conventions.views import SpanView


def _span(operation: str) -> SpanView:
    return SpanView("s1", None, f"{operation} x", "INTERNAL", 1, 2, "UNSET", None,
                    {"gen_ai.operation.name": operation, "gen_ai.tool.name": "x"}, [], None)  # fmt: skip


def _role(span: SpanView, hooks: registry.Hooks) -> str | None:
    decided = registry.role_of(span, hooks)
    return None if decided is None else decided[0]


def test_a_remembered_role_is_the_role_of_that_view_under_those_hooks() -> None:
    hooks = registry.hooks()
    nobody = hooks._replace(role=(), fallback_role=())  # hooks in force with no convention deciding
    tool = _span("execute_tool")
    chat = replace(tool, attributes={"gen_ai.operation.name": "chat"})
    with registry.roles_remembered():
        assert _role(tool, hooks) == TOOL
        assert _role(tool, nobody) is None
        assert _role(tool, hooks) == TOOL
        assert _role(chat, hooks) == LLM  # the same span id, another view
        assert _role(tool, hooks) == TOOL
    assert _role(tool, nobody) is None
    assert _role(chat, hooks) == LLM
