"""Tool execution spans ↔ requested calls.

By call id when the span has one. Otherwise by tool name: each execution (in start order) takes
the requested call of that name it fits best — equal arguments first (an OpenLLMetry call whose
arguments did not parse has no tool span, so a later execution must not take it), then calls
requested before the execution started, from a response related to it (its parent, or a sibling
under the same agent span), from the most recent such response, first in that response. For an
agent loop this is "the k-th execution of N answers the k-th request of N"; it differs only where
a request was never executed.

An execution nested in another of the same tool (an MCP client span and its server span; an
OpenInference TOOL span and, spans below, the `execute_tool` span of the function it runs) is the
same execution seen twice and counts once.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Mapping

from traceladder.extract.conventions.calls import Call
from traceladder.extract.conventions.sightings import Execution


def drop_nested(
    executions: list[Execution],
    parents: Mapping[str, str | None] | None = None,
    llm_span_ids: Collection[str] = (),
) -> list[Execution]:
    """Folds an execution nested in another of the same tool into the outer one. `parents` (every
    span's parent) lets the outer one be any ancestor, not only the parent: a framework's tool span
    (an OpenInference TOOL span, which has no call id) and the `execute_tool` span of the function
    it runs (`call_tool`'s) are often apart by spans of no convention's. The walk stops at the
    first execution above, and at an LLM span (a model call between them makes the inner one a
    call of its own, e.g. a tool that runs an agent)."""
    by_span = {e.span_id: e for e in executions}
    kept = []
    for e in executions:
        outer = _outer_execution(e, by_span, parents or {}, llm_span_ids)
        if (
            outer is not None
            and outer.name == e.name
            and (None in (outer.call_id, e.call_id) or outer.call_id == e.call_id)
        ):
            if outer.result is None:
                outer.result = e.result
            if outer.call_id is None:
                outer.call_id = e.call_id
            continue
        kept.append(e)
    return kept


def _outer_execution(
    e: Execution,
    by_span: dict[str, Execution],
    parents: Mapping[str, str | None],
    llm_span_ids: Collection[str],
) -> Execution | None:
    """The nearest execution above `e` with no LLM span between them, or None."""
    seen = {e.span_id}
    current = e.parent_span_id
    while current is not None and current not in seen:
        found = by_span.get(current)
        if found is not None:
            return found
        if current in llm_span_ids:
            return None
        seen.add(current)  # a parent cycle (a corrupt trace) ends the walk
        current = parents.get(current)
    return None


def match_executions(calls: list[Call], executions: list[Execution]) -> list[Execution]:
    """Sets `Call.execution` on the calls executions answer; returns the executions left over
    (tool spans with no request anywhere in the trace). `calls` must be sorted by key."""
    if not calls or not executions:
        return executions
    by_id: dict[str, list[Call]] = defaultdict(list)
    by_name: dict[str | None, list[Call]] = defaultdict(list)
    for call in calls:
        call_id = call.call_id
        if call_id is not None:
            by_id[call_id].append(call)
        by_name[call.name].append(call)
    anchors: dict[tuple[int, str], int] = {}  # the responses' order, built when first needed

    def preference(e: Execution, c: Call) -> tuple[int, int, int, int, tuple[int, str, int, int, str, int]]:
        mine, theirs = e.canonical_args(), c.canonical_args()
        args = 1 if mine is None or theirs is None else (0 if mine == theirs else 2)
        later = 1 if c.key[0] > e.start_ns else 0
        r = c.response
        related = r is not None and (
            r.span_id == e.parent_span_id
            or (r.parent_span_id is not None and r.parent_span_id == e.parent_span_id)
        )
        if not anchors:
            for call in calls:
                anchors.setdefault(call.key[:2], len(anchors))
        return (args, later, 0 if related else 1, -anchors[c.key[:2]], c.key)

    unmatched = []
    for e in executions:
        candidates: list[Call] = []
        if e.call_id is not None:
            candidates = [c for c in by_id.get(e.call_id, ()) if c.execution is None]
        if not candidates and e.name is not None:
            candidates = [
                c
                for c in by_name.get(e.name, ())
                if c.execution is None and (e.call_id is None or c.call_id is None)
            ]
        if len(candidates) == 1:
            candidates[0].execution = e
        elif candidates:
            min(candidates, key=lambda c: preference(e, c)).execution = e
        else:
            unmatched.append(e)
    return unmatched
