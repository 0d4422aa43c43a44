"""The conventions traceladder reads, in precedence order: the built-ins, and any installed
package's registered in the `traceladder.conventions` entry-point group and named in
`TRACELADDER_CONVENTIONS` (comma-separated entry-point names; opt-in, like rung plug-ins: an
installed reader must not silently change how every trace is read). In its pyproject.toml:

    [project.entry-points."traceladder.conventions"]
    myframework = "my_package.traces:CONVENTION"

The entry point names a `Convention` instance (or class). Everything that reads a span by
convention asks this module: the extraction, the store's tool columns, the trace index, the
judge's exchange reader.
"""

from __future__ import annotations

import os
from functools import cache
from importlib import import_module
from importlib.metadata import entry_points
from typing import NamedTuple

from traceladder.conventions.base import LLM, TOOL, Convention, Role, SetExtraction, ToolColumns
from traceladder.conventions.views import SpanView
from traceladder.errors import UserError

GROUP = "traceladder.conventions"
ENV = "TRACELADDER_CONVENTIONS"
# One line each: a new built-in convention is a module with a `CONVENTION` and a line here.
_BUILTIN = (
    "traceladder.conventions.otel_genai",
    "traceladder.conventions.openinference",
    "traceladder.conventions.openllmetry",
    "traceladder.conventions.frameworks.openai_agents",
    "traceladder.conventions.frameworks.langchain",
    "traceladder.conventions.frameworks.strands",
    "traceladder.conventions.frameworks.google_adk",
    "traceladder.conventions.frameworks.pydantic_ai",
)


def _plugins(names: str) -> list[Convention]:
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    found = {ep.name: ep for ep in entry_points(group=GROUP)}
    out = []
    for name in wanted:
        ep = found.get(name)
        if ep is None:
            installed = ", ".join(sorted(found)) or "none"
            raise UserError(f"{ENV}: no installed convention {name!r}; installed: {installed}")
        try:
            obj = ep.load()
            convention = obj() if isinstance(obj, type) else obj
        except Exception as exc:  # a broken plug-in is a configuration problem, said in one line
            raise UserError(
                f"convention {name!r} ({ep.value}) failed to load: {type(exc).__name__}: {exc}"
            ) from None
        if not isinstance(convention, Convention):
            raise UserError(f"convention {name!r} ({ep.value}) is not a traceladder Convention")
        out.append(convention)
    return out


@cache
def _load(names: str) -> tuple[Convention, ...]:
    builtin = [import_module(path).CONVENTION for path in _BUILTIN]
    return tuple(sorted([*builtin, *_plugins(names)], key=lambda c: c.precedence))


def conventions() -> tuple[Convention, ...]:
    """Every convention in force, lowest precedence first (ties keep registration order)."""
    return _load(os.environ.get(ENV, ""))


def implementing(hook: str) -> tuple[Convention, ...]:
    """The conventions in force that override `hook` (a `Convention` method), in precedence order:
    the extraction asks only these, so a framework's hook costs nothing on other spans."""
    return _implementing(os.environ.get(ENV, ""), hook)


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
    markers: frozenset[str]


def hooks() -> Hooks:
    return _hooks(os.environ.get(ENV, ""))


@cache
def _hooks(names: str) -> Hooks:
    found = {hook: _implementing(names, hook) for hook in Hooks._fields if hook != "markers"}
    return Hooks(**found, markers=_markers(names))


def markers() -> frozenset[str]:
    """Every convention's marker attributes (a span with none of them is not read)."""
    return _markers(os.environ.get(ENV, ""))


@cache
def _markers(names: str) -> frozenset[str]:
    return frozenset().union(*(c.markers for c in _load(names)))


def role_of(span: SpanView, found: Hooks | None = None) -> tuple[Role, Convention] | None:
    """The role of a span and the convention that decided it, or None when none knows it
    (`found`: the hooks in force, when the caller already has them)."""
    found = found if found is not None else hooks()
    for convention in found.role:
        role = convention.role(span)
        if role is not None:
            return role, convention
    for convention in found.fallback_role:
        role = convention.fallback_role(span)
        if role is not None:
            return role, convention
    return None


def role_sql(alias: str = "") -> str:
    """SQL: a span's role ('tool' | 'llm' | 'other', NULL when no convention knows it), decided
    as `role_of` decides it: every convention's strong rule in precedence order, then the weak
    ones. `alias` prefixes the columns (e.g. "s" for `s.attributes`)."""
    found = conventions()
    parts = [c.role_sql for c in found if c.role_sql] + [
        c.fallback_role_sql for c in found if c.fallback_role_sql
    ]
    return _qualified(f"coalesce({', '.join(parts)})" if parts else "NULL", alias)


def decider_sql(alias: str = "") -> str:
    """SQL: the name of the convention whose rule decides a span's role (`role_sql`), NULL when
    none does."""
    found = conventions()
    rules = [(c.name, c.role_sql) for c in found if c.role_sql] + [
        (c.name, c.fallback_role_sql) for c in found if c.fallback_role_sql
    ]
    cases = " ".join(f"WHEN ({sql}) IS NOT NULL THEN '{name}'" for name, sql in rules)
    return _qualified(f"CASE {cases} END" if rules else "NULL", alias)


def tool_column_rules() -> tuple[tuple[str, ToolColumns | None], ...]:
    """(convention name, its `tool_columns_sql`) for every convention in force, in precedence
    order: the file-ingest shredder's tool columns (`otlp.shred`)."""
    return tuple((c.name, c.tool_columns_sql) for c in conventions())


def llm_span_sql(alias: str = "") -> str:
    """SQL: true for an LLM span."""
    return f"({role_sql(alias)}) = 'llm'"


def tool_span_sql(alias: str = "") -> str:
    """SQL: true for a tool execution span."""
    return f"({role_sql(alias)}) = 'tool'"


def _qualified(sql: str, alias: str) -> str:
    prefix = f"{alias}." if alias else ""
    for column in ("operation", "attributes", "scope_name", "name"):
        sql = sql.replace(f"{{{column}}}", prefix + column)
    return sql


def agent_name_sql(alias: str = "") -> str:
    """SQL aggregate: a trace's agent name, from the first convention (in precedence order) that
    any of its spans gives one for."""
    parts = [f"max({c.agent_name_sql})" for c in conventions() if c.agent_name_sql]
    return _qualified(f"coalesce({', '.join(parts)})" if parts else "NULL", alias)


def tool_json_markers() -> tuple[str, ...]:
    return tuple(m for c in conventions() for m in c.tool_json_markers)


class SetFold(NamedTuple):
    """The set-based fold composed from the conventions in force (`storage.set_fold`)."""

    touched: str  # SQL over a `fold_spans` row: true when a convention without SQL may read it
    extractions: tuple[SetExtraction, ...]  # each convention's SQL, in precedence order


def set_fold() -> SetFold | None:
    """The conventions' set-based extraction, or None when it cannot be used: no convention gives
    one, or one in force gives neither an extraction nor `untouched_sql` (an installed reader's
    traces are then always read by its Python)."""
    return _set_fold(os.environ.get(ENV, ""))


@cache
def _set_fold(names: str) -> SetFold | None:
    found = _load(names)
    extractions = tuple(c.set_extraction for c in found if c.set_extraction is not None)
    others = [c for c in found if c.set_extraction is None]
    if not extractions or any(c.untouched_sql is None for c in others):
        return None
    untouched = " AND ".join(f"coalesce({c.untouched_sql}, false)" for c in others) or "true"
    return SetFold(
        _qualified(f"NOT ({untouched})", "").replace("{events}", "events").replace("{keys}", "keys"),
        extractions,
    )


__all__ = [
    "LLM", "TOOL", "conventions", "llm_span_sql", "markers", "role_of", "set_fold", "tool_span_sql",
]  # fmt: skip
