"""Stored traces → a declarative domain and its case suite (`traceladder cases from-traces`).

Each selected conversation becomes one case: a conversation of several selected turns (as the
store grouped them, `conversations`) a MultiTurnCaseV1 case — each turn's own user message (the
last its first request sent) and its own calls as that turn's golden calls, ordering per turn —
and a trace alone (most single-turn agents) a CaseV1 case as follows. Its user request is the
instruction (from the span attributes by convention, else the message events: span events, log
records), its calls (arguments as sent) the golden calls, `order_sensitive` true when a call uses
a value an earlier call's result returned (and the request did not say), `negative` when it made
no call; the dimension follows from the number of calls (0 → D1 when to call, 1 → D2
selection/fill, ≥ 2 → D3 chain) and is stated in the case's notes, the trace id kept in its
context. Tool definitions and results come from the traces, read by the same extraction every
evaluator uses (`store.readers`, `store.exchanges`) — never re-read from raw spans, never
guessed: the definitions of the traces that become cases, then of other selected traces of their
services, then `--tools FILE` for what no trace records. The system prompt the traces sent is
written as `system_prompt.txt`, which a replay sends.

A trace that cannot be a case (no user request recorded, arguments that are not a JSON object or
do not fit the tool's definition, the same request as an earlier trace, a tool no trace defined)
stops the command with one line naming the trace — or, with `skip_bad`, is skipped with that
line. Nothing is written until everything is known: see `domain_writer.write_domain`. What a
trace or a conversation becomes (and why one cannot) is decided, purely, in `recorded_cases`.

`record_suite(db, FromTracesRequest, say)` → `Outcome` is the command's call: it checks the
request, reads `--tools`, opens the store read only and calls `from_traces`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from traceladder.errors import UserError
from traceladder.evaluate.assemble import raw_calls_by_trace
from traceladder.evaluate.trace_schemas import read_tools_file
from traceladder.extract.conventions.exchanges import (
    OPENING_ATTRIBUTE,
    OPENING_EVENTS,
    event_openings,
    exchange_details,
    exchanges,
    turn_messages,
)
from traceladder.store.db import Store, open_store
from traceladder.store.exchanges import read_exchange_rows
from traceladder.store.openings import read_message_events
from traceladder.store.readers import read_call_table
from traceladder.store.recorded import (
    Selection,
    read_conversation_turns,
    read_definitions,
    read_services,
    select_traces,
)
from traceladder.suite.domain.base import compile_validator
from traceladder.workflows.domain_writer import RecordedSuite, SuiteCase, write_domain
from traceladder.workflows.recorded_cases import (
    Recorded,
    case_of,
    conversation_case,
    conversations,
    definition,
    id_fields,
    responses,
    system_prompt,
    tools_of,
    turn_text,
    unusable_group,
)


@dataclass(frozen=True)
class Outcome:
    out: Path
    cases: int
    per_dimension: dict[str, int]
    tools: int
    results: int
    skipped: tuple[tuple[str, str], ...]  # (trace id, why)


@dataclass(frozen=True)
class FromTracesRequest:
    """Record the traces `selection` picks as a domain at `out`: case ids `prefix`-d2-001 (lowercase
    letters and digits, a letter first); `skip_bad`: skip a trace that cannot be a case instead of
    stopping; `tools_path`: OpenAI-format definitions for tools no trace defines."""

    selection: Selection
    out: Path
    prefix: str = "tr"
    skip_bad: bool = False
    tools_path: Path | None = None


def record_suite(db: Path, request: FromTracesRequest, say: Callable[[str], None]) -> Outcome:
    """The `cases from-traces` workflow on the store at `db` (read only); `say` gets one line per
    skipped trace. `UserError` for a bad prefix, a missing store, or as `from_traces` raises."""
    if not re.fullmatch(r"[a-z][a-z0-9]{0,15}", request.prefix):
        raise UserError(
            f"--prefix must be lowercase letters and digits, starting with a letter, not {request.prefix!r}"
        )
    if not db.exists():
        raise UserError(f"no store at {db}; send traces first (`traceladder serve` or `ingest`)")
    tools = read_tools_file(request.tools_path) if request.tools_path is not None else ()
    with open_store(db, read_only=True) as store:
        return from_traces(
            store, request.selection, request.out, prefix=request.prefix, skip_bad=request.skip_bad,
            say=say, tools_file=tools,
        )  # fmt: skip


def from_traces(
    store: Store,
    selection: Selection,
    out: Path,
    *,
    prefix: str = "tr",
    skip_bad: bool = False,
    say: Callable[[str], None] = lambda line: None,
    tools_file: Sequence[Mapping[str, Any]] = (),
) -> Outcome:
    """Record the selected traces as a domain directory plus `cases.jsonl` at `out`.
    `tools_file`: definitions (OpenAI function objects, `--tools FILE`) for tools no trace defines."""
    ids = select_traces(store, selection)
    if not ids:
        raise UserError("no stored trace matches the selection; see `traceladder sql 'SELECT * FROM traces'`")
    recorded = _recorded(store, ids)
    # the definitions of the traces that can become cases (a trace with no user request — a
    # framework's one-span set-up trace — defines nothing the suite replays), then of the other
    # selected traces of their services for a tool none of them defines, then `--tools`
    candidates = [t for t in recorded if t.instruction and t.instruction.strip()]
    services = {t.service for t in candidates}
    tools = tools_of(candidates)
    for name, tool in tools_of(
        [t for t in recorded if t not in candidates and t.service in services]
    ).items():
        tools.setdefault(name, tool)
    for given in tools_file:
        tools.setdefault(
            given["name"], definition(given["name"], given.get("description"), given["parameters"])
        )
    # the traces' own definitions: untrusted, like every schema read from a trace
    validators = {
        name: compile_validator(tool["function"]["parameters"], trusted=False) for name, tool in tools.items()
    }
    cases: list[SuiteCase] = []
    skipped: list[tuple[str, str]] = []
    seen: dict[str, str] = {}
    for group in conversations(recorded):
        why = unusable_group(group, validators, seen)
        if why:
            if not skip_bad:
                raise UserError(
                    f"trace {group[0].trace_id}: {why}; nothing written (--skip-bad skips such traces)"
                )
            say(f"skipped trace {group[0].trace_id}: {why}")
            skipped += [(trace.trace_id, why) for trace in group]
            continue
        first = (group[0].instruction or "") if len(group) == 1 else turn_text(group[0])
        seen[first.strip().casefold()] = group[0].trace_id
        cases.append(case_of(group[0]) if len(group) == 1 else conversation_case(group))
    if not cases:
        raise UserError(f"none of the {len(recorded)} selected traces can be a case; nothing written")
    kept = [t for t in recorded if t.trace_id not in dict(skipped)]
    suite = RecordedSuite(
        prefix=prefix,
        tools=[tools[name] for name in sorted(tools)],
        cases=cases,
        responses=responses(kept),
        id_fields=sorted(id_fields(cases)),
        system_prompt=system_prompt(kept),
    )
    write_domain(suite, out)
    per_dimension: dict[str, int] = {}
    for case in cases:
        per_dimension[case.dimension] = per_dimension.get(case.dimension, 0) + 1
    return Outcome(out, len(cases), per_dimension, len(tools), len(suite.responses), tuple(skipped))


def _recorded(store: Store, ids: list[str]) -> list[Recorded]:
    """What each trace recorded: the user's request and the system prompt from the span
    attributes (by convention), else from the message events (span events, log records)."""
    rows = read_exchange_rows(store, ids, calls=True)
    said, openings = exchanges(rows), exchange_details(rows)
    events = read_message_events(store, ids, attribute=OPENING_ATTRIBUTE, names=OPENING_EVENTS)
    from_events = event_openings(events)
    calls = raw_calls_by_trace(read_call_table(store, ids))
    definitions = read_definitions(store, ids)
    services = read_services(store, ids)
    messages = turn_messages(rows)
    grouped = read_conversation_turns(store, ids)
    out = []
    for t in ids:
        system_events, user_events = from_events.get(t, (None, None))
        instruction = said[t].instruction if t in said else None
        opening = openings[t].opening if t in openings else []
        system = next((m.text for m in opening if m.role in ("system", "developer")), None)
        conversation, turn = grouped.get(t, (None, 0))
        out.append(
            Recorded(t, instruction or user_events, calls.get(t, ()), definitions.get(t, []),
                     system or system_events, services.get(t), messages.get(t), conversation, turn)
        )  # fmt: skip
    return out
