"""Assembling each trace's inputs: its calls, and — when they exist — its case, tool schemas and
domain rules. Everything here is picklable data, so worker processes can do the same.

Which schemas judge a trace: a case-tagged trace uses its domain's (recorded with the run, named
on the trace, or the default); a trace with no case uses the domain named with `--domain`, and
none otherwise — rung 1 is then `not_evaluated` with the reason, never passed by default.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from traceladder.cases.loader import load_cases
from traceladder.cases.model import Case
from traceladder.domain.registry import DEFAULT_DOMAIN, load_domain
from traceladder.evaluators.inputs import DomainRules, TraceInputs
from traceladder.evaluators.ladder import Ladder
from traceladder.evaluators.schema import SchemaRegistry
from traceladder.evaluators.types import Call
from traceladder.storage.readers import UnitRow


@dataclass(frozen=True)
class DomainContext:
    """One domain, compiled once: its rules, schemas, cases and dimension order."""

    name: str
    rules: DomainRules
    tools: SchemaRegistry
    cases: Mapping[str, Case]
    dimensions: tuple[str, ...]


@dataclass(frozen=True)
class Context:
    """Everything judging needs besides the traces; built once per evaluation, sent once to each
    worker process."""

    ladder: Ladder
    domains: Mapping[str, DomainContext]
    default_domain: str = DEFAULT_DOMAIN  # for case-tagged traces that name no domain
    untagged_domain: str | None = None  # schemas for traces with no case (`--domain`)
    unknown: Mapping[str, str] = field(default_factory=dict)  # domain name → why it did not load


def build_context(
    units: Sequence[UnitRow],
    ladder: Ladder,
    *,
    domain: str | None = None,
    cases_path: Path | None = None,
) -> Context:
    """Load every domain the units need. `domain` names the default for case-tagged traces that
    name none, and the schemas for traces without a case; `cases_path` replaces the default
    domain's shipped suite."""
    default = domain or DEFAULT_DOMAIN
    names = {u.domain for u in units if u.domain} | {default}
    domains: dict[str, DomainContext] = {}
    for name in sorted(names):
        d = load_domain(name)
        cases = load_cases(d, cases_path if name == default else None) if d.suite or cases_path else ()
        dimensions = tuple(d.suite.dimensions) if d.suite else ()
        tools = SchemaRegistry(d.tool_schemas, f"domain:{d.name}")
        domains[name] = DomainContext(name, DomainRules.of(d), tools, {c.id: c for c in cases}, dimensions)
    return Context(ladder, domains, default, domain)


def inputs_for(unit: UnitRow, calls: tuple[Call, ...], ctx: Context) -> TraceInputs:
    tagged = unit.case_id is not None
    name = unit.domain or (ctx.default_domain if tagged else ctx.untagged_domain)
    d = ctx.domains.get(name) if name else None
    absent: dict[str, str] = {}
    case = None
    if tagged:
        case = d.cases.get(unit.case_id) if d and unit.case_id else None
        if case is None:
            absent["case"] = f"case {unit.case_id} is not in the {name} suite"
    agent_error = (unit.error_type or "agent error") if tagged and unit.agent_status == "error" else None
    return TraceInputs(
        unit.trace_id, calls, case, d.tools if d else None, d.rules if d else None,
        agent_error=agent_error, absent=absent,
    )  # fmt: skip


RawCall = tuple[str, str | None, bool, str | None, int]  # (tool, raw arguments, ok, raw result, ordinal)


def raw_calls_by_trace(table: pa.Table) -> dict[str, tuple[RawCall, ...]]:
    """Tool-call rows (trace_id, ordinal, tool_name, arguments_raw, status, result) → per trace,
    the calls as recorded: cheap to build, and exactly what judging a trace depends on."""
    out: dict[str, list[RawCall]] = {}
    cols = [table.column(i).to_pylist() for i in range(table.num_columns)]
    for trace_id, ordinal, tool, raw, status, result in zip(*cols, strict=True):
        out.setdefault(trace_id, []).append((tool, raw, status == "ok", result, ordinal))
    return {trace: tuple(calls) for trace, calls in out.items()}


class CallParser:
    """Raw calls → `Call`s, each distinct JSON text decoded once. Results are parsed only for
    chain requests (`requests`), the one place a code rung reads a result; the raw text stays on
    every call."""

    def __init__(self, requests: frozenset[str] = frozenset()) -> None:
        self.requests = requests
        self._decoded: dict[str, tuple[Any, bool]] = {}

    def _parse(self, raw: str | None) -> tuple[Any, bool]:
        if raw is None:
            return None, True
        hit = self._decoded.get(raw)
        if hit is None:
            try:
                hit = (json.loads(raw), True)
            except ValueError:
                hit = (None, False)
            if len(self._decoded) > 200_000:
                self._decoded.clear()
            self._decoded[raw] = hit
        return hit

    def calls(self, raw_calls: tuple[RawCall, ...]) -> tuple[Call, ...]:
        out = []
        for tool, raw, ok, result, ordinal in raw_calls:
            arguments, parsed = self._parse(raw)
            value = self._parse(result)[0] if tool in self.requests else None
            out.append(Call(tool, arguments, raw, ok, value, ordinal, parsed, result))
        return tuple(out)
