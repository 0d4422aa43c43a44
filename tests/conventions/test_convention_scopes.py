"""A convention that names its instrumentation scopes (`Convention.scopes`) is asked only about
their spans (`registry.for_scope`): the extraction skips it for every other span, which is exact
only if each of its hooks answers "nothing here" for those spans anyway. That is proven here for
every built-in that names scopes, over every span of every captured producer and framework, each
read as if another instrumentation had written it."""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest

from tests.conventions.test_conventions import PROTOBUF, span_views
from traceladder.decode import decode_traces
from traceladder.extract.conventions import registry
from traceladder.extract.conventions.base import TOOL, Convention
from traceladder.extract.conventions.sightings import Execution
from traceladder.extract.conventions.views import SpanView

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SCOPED = [c for c in registry.conventions() if c.scopes is not None]
# What every hook of the extraction answers when a convention has nothing to say.
NOTHING = {"role": None, "fallback_role": None, "agent_name": None, "response_calls": [], "carried_calls": [],
           "histories": [], "request_definitions": [], "tool_definition": None}  # fmt: skip


@cache
def _spans() -> tuple[SpanView, ...]:
    bodies = sorted(FIXTURES.glob("producers/*/*/traces-*.pb")) + sorted(
        FIXTURES.glob("frameworks/*/*/traces-*.pb")
    )
    return tuple(v for path in bodies for v in span_views(decode_traces(path.read_bytes(), PROTOBUF).table))


def _execution(span: SpanView) -> Execution:
    """The execution the convention deciding the span reads from it (what refining is asked to
    correct), else a made-up one."""
    decided = registry.role_of(span)
    found = decided[1].execution(span) if decided is not None and decided[0] == TOOL else None
    if found is not None:
        return found
    return Execution(span.span_id, span.parent_span_id, span.start_ns, span.end_ns, "tool", "call_1",
                     '{"a": 1}', 4, "done", False, None, "otel_genai")  # fmt: skip


def test_the_frameworks_that_read_one_instrumentation_name_it() -> None:
    assert {c.name for c in SCOPED} == {"google_adk", "langchain", "litellm", "openai_agents", "openai_responses",
                                        "pydantic_ai", "strands", "vercel_ai"}  # fmt: skip


@pytest.mark.parametrize("convention", SCOPED, ids=lambda c: c.name)
def test_a_convention_naming_its_scopes_says_nothing_about_another_scopes_spans(
    convention: Convention,
) -> None:
    assert convention.scopes is not None
    spans = _spans()
    own = [s for s in spans if s.scope_name in convention.scopes]
    # the check below means something: on its own spans the convention does say something
    assert own, convention.name
    assert any(
        getattr(convention, hook)(s) != answer for s in own for hook, answer in NOTHING.items()
    ) or any(convention.refine_execution(s, e) is not e for s in own for e in [_execution(s)]), (
        convention.name
    )
    for span in spans:
        for scope in ("elsewhere", None, span.scope_name):
            if scope in convention.scopes:
                continue
            other = replace(span, scope_name=scope)
            for hook, answer in NOTHING.items():
                assert getattr(convention, hook)(other) == answer, (convention.name, hook, span.name, scope)
            execution = _execution(span)
            assert convention.refine_execution(other, execution) is execution, (convention.name, span.name)


def test_a_span_is_asked_of_the_conventions_of_its_scope_and_of_those_naming_none() -> None:
    hooks = registry.hooks()
    for scope in ("elsewhere", None, "ai", "gcp.vertex.agent"):
        narrowed = registry.for_scope(hooks, scope)
        assert narrowed.markers == hooks.markers
        for hook in registry.Hooks._fields:
            if hook == "markers":
                continue
            expected = tuple(c for c in getattr(hooks, hook) if c.scopes is None or scope in c.scopes)
            assert getattr(narrowed, hook) == expected, (scope, hook)
        assert registry.for_scope(hooks, scope) is narrowed  # made once per scope
    # Vercel's spans are asked of Vercel's convention; no other span is
    assert any(c.name == "vercel_ai" for c in registry.for_scope(hooks, "ai").role)
    assert not any(c.name == "vercel_ai" for c in registry.for_scope(hooks, "elsewhere").role)
    assert any(c.name == "otel_genai" for c in registry.for_scope(hooks, "elsewhere").role)
