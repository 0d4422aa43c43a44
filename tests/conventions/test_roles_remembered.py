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


def test_a_tool_span_s_execution_is_read_once_per_view_and_convention_while_roles_are_remembered() -> None:
    """The conventions' collect and the reading pass both ask for a tool span's execution: read
    once for that very view and convention, afresh for another view, another convention, or
    outside `roles_remembered`."""
    tool = _span("execute_tool")
    decided = registry.role_of(tool)
    assert decided is not None and decided[0] == TOOL
    convention = decided[1]
    openinference = next(c for c in registry.conventions() if c.name == "openinference")
    renamed = replace(tool, attributes={**tool.attributes, "gen_ai.tool.name": "y"})
    with registry.roles_remembered():
        first = registry.execution_of(tool, convention)
        assert first is not None and first.name == "x"
        assert registry.execution_of(tool, convention) is first
        again = registry.execution_of(renamed, convention)
        assert again is not None and again.name == "y"
        assert registry.execution_of(tool, openinference) is not first
        assert registry.execution_of(tool, convention) == first  # one entry a view: read again
    assert registry.execution_of(tool, convention) is not first
