"""From collected sources to one row per call: responses → history → executions → order.

1. Responses: every LLM span (or span named by event records) in start order is one turn; the
   sources describing one response (span attributes, its records, its span events) are merged by
   call index. Nested LLM spans (two instrumentations wrapping one request) are one response.
2. Tool spans bind to those calls (`matching`).
3. Histories confirm those turns, supply results, or add history-only turns (`history`), which
   the tool spans left over bind to; a tool span nothing requested becomes its own call.
4. Each call takes its best value per field (docs/conventions.md) and the sort key orders them.
5. Copies the steps above left apart that carry one call id are one call (`one_per_id`): a
   history that splits a parallel pair into two assistant messages, a log-record history that
   repeats each call, a second execution span of the same call.
"""

from __future__ import annotations

import json
import re
from operator import itemgetter
from typing import Any

from traceladder.extract.conventions.attribute_values import (
    ABSENT,
    ARGS_NONE,
    ARGS_STRUCTURED,
    ARGS_TOOL_SPAN,
    args_text,
    canonical,
)
from traceladder.extract.conventions.calls import PHASE_RESPONSE, Call, Slot
from traceladder.extract.conventions.collect import Collected
from traceladder.extract.conventions.execution_pairing import drop_nested, match_executions
from traceladder.extract.conventions.history import Histories
from traceladder.extract.conventions.sightings import Execution, LLMSpan, ResponseOutput, Sighting
from traceladder.extract.conventions.views import ERROR, OK, ORIGIN_RANK, TOOL_SPAN, UNKNOWN, ExtractedCall

_ORIGINS = {rank: origin for origin, rank in ORIGIN_RANK.items()}


def _same_response(a: LLMSpan, b: LLMSpan) -> bool:
    """Two instrumentations wrapping one request give nested LLM spans (parent and child)."""
    return (a.span_id is not None and b.parent_span_id == a.span_id) or (
        b.span_id is not None and a.parent_span_id == b.span_id
    )


def _responses(llm_spans: list[LLMSpan]) -> list[Slot]:
    """Turn numbers and the calls of every response, as slots sorted by key."""
    slots: list[Slot] = []
    previous: tuple[LLMSpan, Slot | None] | None = None
    turn = 0
    for llm in llm_spans:
        outputs = [o for o in llm.outputs if o.calls]
        if previous is not None and _same_response(previous[0], llm):
            llm.turn = turn
            slot = previous[1]
            if slot is not None:  # the nested copy's calls are extra sightings of the same calls
                for output in outputs:
                    for call, seen in zip(slot.calls, output.calls, strict=False):
                        call.sightings.append((ORIGIN_RANK[output.origin], seen))
            elif outputs:
                previous = (previous[0], _slot(previous[0], outputs, turn, slots))
            continue
        turn += 1
        llm.turn = turn
        previous = (llm, _slot(llm, outputs, turn, slots) if outputs else None)
    return slots


def _aligned(outputs: list[ResponseOutput]) -> list[list[tuple[int, Sighting]]]:
    """The sources describing one response, merged into its calls: the longest list gives the
    order; every other source's sightings join the call with the same id, else the same tool and
    arguments, else the same position (docs/conventions.md, "Which copy decides")."""
    ordered = sorted(outputs, key=lambda o: -len(o.calls))
    base = ordered[0]
    merged = [[(ORIGIN_RANK[base.origin], s)] for s in base.calls]
    for output in ordered[1:]:
        taken: set[int] = set()
        rank = ORIGIN_RANK[output.origin]
        for j, seen in enumerate(output.calls):
            found = _same_call(merged, seen, taken, j)
            if found is None:
                merged.append([(rank, seen)])
                taken.add(len(merged) - 1)
            else:
                merged[found].append((rank, seen))
                taken.add(found)
    return merged


def _same_call(
    merged: list[list[tuple[int, Sighting]]], seen: Sighting, taken: set[int], j: int
) -> int | None:
    free = [k for k in range(len(merged)) if k not in taken]
    if seen.call_id is not None:
        for k in free:
            ids = {s.call_id for _, s in merged[k] if s.call_id is not None}
            if seen.call_id in ids:
                return k
    key = canonical(seen.args)
    for k in free:
        first = merged[k][0][1]
        if first.call_id is not None and seen.call_id is not None:
            continue  # both have ids and they differ
        if first.name == seen.name and key is not None and canonical(first.args) == key:
            return k
    if j in free:
        first = merged[j][0][1]
        ids_differ = first.call_id is not None and seen.call_id is not None
        if not ids_differ and (first.name is None or seen.name is None or first.name == seen.name):
            return j
    return None


def _slot(llm: LLMSpan, outputs: list, turn: int, slots: list[Slot]) -> Slot:
    anchor = llm.anchor
    calls = [
        Call(
            (anchor[0], anchor[1], PHASE_RESPONSE, 0, "", j), sightings, response=llm, turn=turn, call_index=j
        )
        for j, sightings in enumerate(_aligned(outputs))
    ]
    slot = Slot((anchor[0], anchor[1], PHASE_RESPONSE, 0, "", 0), calls, False, anchor=anchor)
    slots.append(slot)
    return slot


def _tool_only(e: Execution) -> Call:
    seen = Sighting(e.name, e.call_id, e.args, e.args_rank, e.convention, None)
    return Call(
        (e.start_ns, e.span_id, PHASE_RESPONSE, 0, "", 0), [(ORIGIN_RANK[TOOL_SPAN], seen)], execution=e
    )


def _arguments(model_side: list[tuple[int, Sighting]], e: Execution | None) -> tuple[Any, int]:
    """The precedence rule (docs/conventions.md, "Which copy decides"): the model's side (its
    response, an event, a later request's history) is the authority on the arguments — the copy
    closest to the model's text wins; an execution span only supplies the verbatim text of the
    same arguments (a producer that kept the model's string on the tool span but re-serialised
    it in the messages), or the arguments when no model-side copy has any. Returns the value and
    the origin rank it came from."""
    best: tuple[int, int, Sighting] | None = None
    for rank, seen in model_side:
        if seen.args_rank < ARGS_NONE and (best is None or (seen.args_rank, rank) < best[:2]):
            best = (seen.args_rank, rank, seen)
    tool_span = ORIGIN_RANK[TOOL_SPAN]
    if best is None:
        return (e.args, tool_span) if e is not None else (ABSENT, model_side[0][0])
    if best[0] == ARGS_STRUCTURED and e is not None and isinstance(e.args, str) and _same(e, best[2].args):
        return e.args, tool_span
    return best[2].args, best[1]


_SURROGATE = re.compile("[\ud800-\udfff]")


def _same(e: Execution, structured: Any) -> bool:
    """Whether a tool span's argument text holds the same arguments as a structured copy. A lone
    surrogate escape (JSON allows `"\\ud800"`) stays as text on the tool span but became U+FFFD in
    the stored structure (decision 71), so text orjson refuses is compared with them replaced."""
    mine = e.canonical_args()
    if mine is not None and mine == canonical(structured):
        return True
    if mine is None or not mine.startswith("r"):  # parsed, and it differs
        return False
    try:
        value = json.loads(e.args)
    except (ValueError, RecursionError):
        return False
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    theirs = canonical(structured)
    return theirs is not None and "j" + _SURROGATE.sub("\ufffd", text) == theirs


def structured_arguments(structured: Any, executed: str | None) -> str | None:
    """`arguments_raw` of a call whose only model-side arguments are `structured`, executed by a
    span whose argument text is `executed` (the set-based fold's hand-back; `_arguments`)."""
    if isinstance(executed, str):
        e = Execution("", None, 0, 0, None, None, executed, ARGS_TOOL_SPAN, None, False, None, "")
        if _same(e, structured):
            return executed
    return args_text(structured)


def _row(ordinal: int, call: Call) -> ExtractedCall:
    e, r = call.execution, call.response
    model_side = sorted(call.sightings, key=itemgetter(0)) if len(call.sightings) > 1 else call.sightings
    sightings = model_side
    if e is not None:
        executed = Sighting(e.name, e.call_id, e.args, e.args_rank, e.convention, None)
        sightings = sorted([*sightings, (ORIGIN_RANK[TOOL_SPAN], executed)], key=itemgetter(0))
    # best origin first; within one, the order they were found in
    origin_rank, best = sightings[0]
    name = call_id = record = None
    for _, seen in sightings:  # each field from the best origin that has it
        name = seen.name if name is None else name
        call_id = seen.call_id if call_id is None else call_id
        record = seen.record_id if record is None else record
    args_value, _ = _arguments(model_side, e)
    result = call.best_result()
    # executed: its span says how it went; not executed: a result fed back still proves it ran
    status = (ERROR if e.failed else OK) if e is not None else (OK if result is not None else UNKNOWN)
    response_span = r.span_id if r is not None else None
    timed = e if e is not None else r
    return ExtractedCall(
        ordinal, name or "", call_id, args_text(args_value), result, status,
        e.error_type if e is not None else None, best.convention, _ORIGINS[origin_rank],
        e.span_id if e is not None else (response_span or call.found_on), response_span, record,
        call.turn, call.call_index, timed.start_ns if timed is not None else None,
        timed.end_ns if timed is not None else None,
    )  # fmt: skip


def _copies(a: ExtractedCall, b: ExtractedCall) -> bool:
    """Whether two rows with one call id are copies of one call: the same tool (or one unnamed),
    and not two calls two responses made — a producer that numbers its ids per response (`call_0`
    in every turn) reuses them for different calls, and those stay apart."""
    if a.tool_name and b.tool_name and a.tool_name != b.tool_name:
        return False
    return a.turn is None or b.turn is None


def _combined(a: ExtractedCall, b: ExtractedCall) -> ExtractedCall:
    """One row from two copies of a call: the copy a response made (else the best origin) keeps
    its fields; the other fills what it lacks — arguments, the result, and the execution's status,
    span and times when only the other was executed. It keeps the earlier copy's place."""
    base, other = (
        (a, b)
        if (a.turn is not None, -ORIGIN_RANK[a.origin]) >= (b.turn is not None, -ORIGIN_RANK[b.origin])
        else (b, a)
    )
    row = base._replace(
        ordinal=min(a.ordinal, b.ordinal),
        tool_name=base.tool_name or other.tool_name,
        arguments_raw=base.arguments_raw if base.arguments_raw is not None else other.arguments_raw,
        result=base.result if base.result is not None else other.result,
        record_id=base.record_id or other.record_id,
    )
    if base.status == UNKNOWN and other.status != UNKNOWN:
        row = row._replace(
            status=other.status, error_type=other.error_type, result=row.result or other.result
        )
        if other.origin == TOOL_SPAN:
            row = row._replace(span_id=other.span_id, start_ns=other.start_ns, end_ns=other.end_ns)
    return row


def one_per_id(rows: list[ExtractedCall]) -> list[ExtractedCall]:
    """Rows that are copies of one call by call id (`_copies`) merged into one, in order,
    numbered 1..n again: the rule "one call id, one call" across every source of a trace."""
    out: list[ExtractedCall] = []
    by_id: dict[str, int] = {}
    for row in rows:
        k = by_id.get(row.call_id) if row.call_id is not None else None
        if k is not None and _copies(out[k], row):
            out[k] = _combined(out[k], row)
            continue
        if row.call_id is not None:
            by_id[row.call_id] = len(out)
        out.append(row)
    if len(out) == len(rows):
        return rows
    return [r._replace(ordinal=i) for i, r in enumerate(out, 1)]


def merge(collected: Collected) -> tuple[list[ExtractedCall], list[ExtractedCall]]:
    """The trace's calls (ordinal 1..n) and, apart, the calls its first request's input already
    held — made before the trace began, so never its rows (ordinal 1..m among themselves)."""
    slots = _responses(collected.llm_spans)
    requested = [c for s in slots for c in s.calls]
    # Tool spans first join the calls responses made; any left over may have been requested in
    # a turn only a history shows, so then every history is read.
    llm_ids = {s.span_id for s in collected.llm_spans if s.span_id is not None}
    executions = drop_nested(collected.executions, collected.parents, llm_ids)
    unmatched = match_executions(requested, executions)
    histories = Histories(slots, skip=not unmatched)
    histories.bind_all(collected.llm_spans)
    own, before = (sorted(calls, key=lambda c: c.key) for calls in histories.prior())
    unmatched = match_executions(own, unmatched)
    # A tool span left over that names a call made before the trace by its id (a turn resumed
    # after an approval) is that call's execution, not a call of its own. By id only: a tool span
    # with no id is a call of this trace (producers that record only tool spans).
    with_id = {c.call_id for c in before if c.call_id is not None}
    resumed = [e for e in unmatched if e.call_id in with_id]
    unmatched = [e for e in unmatched if e.call_id not in with_id]
    match_executions([c for c in before if c.call_id is not None], resumed)
    histories.pair_leftovers()
    calls = requested + own + [_tool_only(e) for e in unmatched if e.name is not None]
    calls.sort(key=lambda c: c.key)
    return one_per_id([_row(i, call) for i, call in enumerate(calls, 1)]), [
        _row(i, call) for i, call in enumerate(before, 1)
    ]
