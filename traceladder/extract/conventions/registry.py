"""The conventions traceladder reads, in precedence order: the built-ins, and any installed
package's registered in the `traceladder.conventions` entry-point group and named in the store's
`conventions` setting (comma-separated entry-point names; opt-in, like rung plug-ins: an
installed reader must not silently change how every trace is read). In its pyproject.toml:

    [project.entry-points."traceladder.conventions"]
    myframework = "my_package.traces:CONVENTION"

The entry point names a `Convention` instance (or class). Everything that reads a span by
convention asks this module: the extraction stage (`traceladder.extract`) and the judge's
exchange reader. Which plug-ins are in force is the caller's to say (`in_force`): the extraction
stage says the store's recorded setting; without one, what `project_config.named_conventions`
names (traceladder.toml's `[plugins] conventions`, else `TRACELADDER_CONVENTIONS`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from typing import NamedTuple

from traceladder.errors import UserError
from traceladder.extract.conventions.base import LLM, TOOL, Convention, Role
from traceladder.extract.conventions.sightings import Execution
from traceladder.extract.conventions.views import SpanView
from traceladder.instrumentation import semconv as sc
from traceladder.plugins.loader import Kind, entries, load
from traceladder.project_config import CONVENTIONS_ENV, named_conventions

GROUP = "traceladder.conventions"
# The mark of a simulated user's spans: no convention reads them (docs/conversations.md).
SIMULATED_USER_KEY = sc.ROLE
SIMULATED_USER = sc.ROLE_SIMULATED_USER
# One line each: a new built-in convention is a module with a `CONVENTION` and a line here.
_BUILTIN: tuple[str, ...] = (
    "traceladder.extract.conventions.otel_genai",
    "traceladder.extract.conventions.openinference",
    "traceladder.extract.conventions.openllmetry",
    "traceladder.extract.conventions.frameworks.openai_agents",
    "traceladder.extract.conventions.frameworks.langchain",
    "traceladder.extract.conventions.frameworks.strands",
    "traceladder.extract.conventions.frameworks.google_adk",
    "traceladder.extract.conventions.frameworks.pydantic_ai",
    "traceladder.extract.conventions.frameworks.openai_responses",
    "traceladder.extract.conventions.frameworks.litellm",
    # JavaScript producers
    "traceladder.extract.conventions.frameworks.vercel_ai",
)
_BUILTIN += ("traceladder.extract.conventions.frameworks.llamaindex",)  # issue 32, Python producers


_IN_FORCE: ContextVar[str | None] = ContextVar("traceladder_conventions", default=None)


def _names() -> str:
    found = _IN_FORCE.get()
    return named_conventions()[0] if found is None else found


@contextmanager
def in_force(names: str) -> Iterator[None]:
    """The plug-ins named in `names` (comma-separated entry-point names) are the ones in force
    meanwhile, whatever `TRACELADDER_CONVENTIONS` says."""
    token = _IN_FORCE.set(names)
    try:
        yield
    finally:
        _IN_FORCE.reset(token)


def _checked(name: str, target: str, obj: object) -> Convention:
    convention = obj() if isinstance(obj, type) else obj
    if not isinstance(convention, Convention):
        raise UserError(f"convention {name!r} ({target}) is not a traceladder Convention")
    return convention


CONVENTIONS = Kind(
    name="convention",
    group=GROUP,
    builtins={path.rpartition(".")[2]: f"{path}:CONVENTION" for path in _BUILTIN},
    check=_checked,
    named_by="[plugins] conventions in traceladder.toml, or reindex --conventions; recorded in the store",
)


def _plugins(names: str) -> list[Convention]:
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    out = []
    for name in wanted:
        if name in CONVENTIONS.builtins:
            raise UserError(f"convention {name!r} is built in and always read; name only plug-ins")
        if name not in entries(CONVENTIONS):
            installed = ", ".join(sorted(set(entries(CONVENTIONS)) - set(CONVENTIONS.builtins))) or "none"
            raise UserError(
                f"the conventions setting ([plugins] conventions in traceladder.toml, "
                f"{CONVENTIONS_ENV}, or the store's) names {name!r}, which is not an installed "
                f"convention; installed plug-ins: {installed}"
            )
        out.append(load(CONVENTIONS, name))
    return out


@cache
def _load(names: str) -> tuple[Convention, ...]:
    builtin = [load(CONVENTIONS, name) for name in CONVENTIONS.builtins]
    return tuple(sorted([*builtin, *_plugins(names)], key=lambda c: c.precedence))


def conventions() -> tuple[Convention, ...]:
    """Every convention in force, lowest precedence first (ties keep registration order)."""
    return _load(_names())


def implementing(hook: str) -> tuple[Convention, ...]:
    """The conventions in force that override `hook` (a `Convention` method), in precedence order:
    the extraction asks only these, so a framework's hook costs nothing on other spans."""
    return _implementing(_names(), hook)


@cache
def _implementing(names: str, hook: str) -> tuple[Convention, ...]:
    base = getattr(Convention, hook)
    return tuple(c for c in _load(names) if getattr(type(c), hook) is not base)


class Hooks(NamedTuple):
    """Per hook, the conventions in force that implement it, in precedence order: resolved once
    per trace, so the extraction's per-span loops touch only conventions with something to say."""

    role: tuple[Convention, ...]
    fallback_role: tuple[Convention, ...]
    response_calls: tuple[Convention, ...]
    histories: tuple[Convention, ...]
    request_definitions: tuple[Convention, ...]
    tool_definition: tuple[Convention, ...]
    refine_execution: tuple[Convention, ...]
    carried_calls: tuple[Convention, ...]
    agent_name: tuple[Convention, ...]
    markers: frozenset[str]


def hooks() -> Hooks:
    return _hooks(_names())


@cache
def _hooks(names: str) -> Hooks:
    found = {hook: _implementing(names, hook) for hook in Hooks._fields if hook != "markers"}
    return Hooks(**found, markers=_markers(names))


# (id of the hooks, scope) → (those hooks, narrowed to the scope). Bounded: scope names come from
# producers; past the bound the narrowings are made again, never wrong.
_SCOPED: dict[tuple[int, str | None], tuple[Hooks, Hooks]] = {}
_SCOPED_MAX = 1024


def for_scope(found: Hooks, scope: str | None) -> Hooks:
    """`found` without the conventions that read only other scopes' spans (`Convention.scopes`):
    what a span of `scope` is asked. Most built-in frameworks read one instrumentation's spans;
    asking them about every other span cost ~4% of the extraction stage (measured)."""
    hit = _SCOPED.get((id(found), scope))
    if hit is not None and hit[0] is found:
        return hit[1]
    asked = {
        hook: tuple(c for c in getattr(found, hook) if c.scopes is None or scope in c.scopes)
        for hook in Hooks._fields
        if hook != "markers"
    }
    narrowed = Hooks(**asked, markers=found.markers)
    if len(_SCOPED) >= _SCOPED_MAX:
        _SCOPED.clear()
    _SCOPED[(id(found), scope)] = (found, narrowed)
    return narrowed


def markers() -> frozenset[str]:
    """Every convention's marker attributes (a span with none of them is not read)."""
    return _markers(_names())


@cache
def _markers(names: str) -> frozenset[str]:
    return frozenset().union(*(c.markers for c in _load(names)))


def simulated_user(span: SpanView) -> bool:
    """Whether the span is a simulated user's request (`produce.agent.user_sim`): never the agent's, so
    nothing of it is read — no role, no call, no history, no unread tool activity."""
    attrs = span.attributes
    return isinstance(attrs, dict) and attrs.get(SIMULATED_USER_KEY) == SIMULATED_USER


# Within one trace's extraction (`roles_remembered`), a span's role is decided once: the stage
# asks it three times (the span's derived columns, the conventions' collect, the reading pass).
# Keyed by the view's identity, holding the view (so the id is not reused meanwhile) and the hooks
# it was decided with (other hooks decide again).
_RoleMemo = dict[int, tuple[SpanView, "Hooks", "tuple[Role, Convention] | None"]]
_ROLES: ContextVar[_RoleMemo | None] = ContextVar("traceladder_roles", default=None)
# Likewise a tool span's execution, which the conventions' collect and the reading pass both read.
_ExecutionMemo = dict[int, tuple[SpanView, Convention, Execution | None]]
_EXECUTIONS: ContextVar[_ExecutionMemo | None] = ContextVar("traceladder_executions", default=None)


@contextmanager
def roles_remembered() -> Iterator[None]:
    """Meanwhile `role_of` decides each span view's role once per hooks, and `execution_of` reads
    each tool span's execution once per convention."""
    token = _ROLES.set({})
    executions = _EXECUTIONS.set({})
    try:
        yield
    finally:
        _EXECUTIONS.reset(executions)
        _ROLES.reset(token)


def execution_of(span: SpanView, convention: Convention) -> Execution | None:
    """`convention.execution(span)`, read once per span view within `roles_remembered`: the
    conventions' collect pairs it with calls, the reading pass asks whether it names its tool.
    Shared, so what a caller changes the other sees: pairing fills an outer execution's `result`
    and `call_id` from a nested one (`execution_pairing.drop_nested`); nothing changes `name`."""
    memo = _EXECUTIONS.get()
    if memo is None:
        return convention.execution(span)
    hit = memo.get(id(span))
    if hit is not None and hit[0] is span and hit[1] is convention:
        return hit[2]
    found = convention.execution(span)
    memo[id(span)] = (span, convention, found)
    return found


def role_of(span: SpanView, found: Hooks | None = None) -> tuple[Role, Convention] | None:
    """The role of a span and the convention that decided it, or None when none knows it
    (`found`: the hooks in force, when the caller already has them)."""
    found = found if found is not None else hooks()
    memo = _ROLES.get()
    if memo is None:
        return _decide(span, found)
    hit = memo.get(id(span))
    if hit is not None and hit[0] is span and hit[1] is found:
        return hit[2]
    decided = _decide(span, found)
    memo[id(span)] = (span, found, decided)
    return decided


def _decide(span: SpanView, found: Hooks) -> tuple[Role, Convention] | None:
    if simulated_user(span):
        return None  # a simulated user's span is never the agent's, whatever it records
    found = for_scope(found, span.scope_name)
    for convention in found.role:
        role = convention.role(span)
        if role is not None:
            return role, convention
    for convention in found.fallback_role:
        role = convention.fallback_role(span)
        if role is not None:
            return role, convention
    return None


__all__ = [
    "LLM",
    "TOOL",
    "conventions",
    "execution_of",
    "for_scope",
    "in_force",
    "markers",
    "role_of",
    "roles_remembered",
    "simulated_user",
]
