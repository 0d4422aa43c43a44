"""A second tool domain, as a third party would ship one: four calendar tools, a dry-run sandbox,
six cases over two dimensions and the simulator's hints — registered through the
`traceladder.domains` entry point (see ../traceladder_calendar-0.1.dist-info). No traceladder code
knows it exists."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from traceladder.plugin_api.domains import (
    CategorySpec,
    ChainSpec,
    Domain,
    LedgerEntry,
    SimHints,
    SuiteSpec,
    SuiteTotals,
    ToolOutcome,
)

DATA = Path(__file__).parent / "data"
FILES = ("tools.json", "fixtures.json", "system_prompt.txt")

SUITE = SuiteSpec(
    name="calendar",
    id_prefix="cal",
    dimensions={"D1": "tool selection", "D2": "booking chains"},
    categories={
        "event_lookup": CategorySpec("D1", 1, ("get_event",), False, False),
        "day_listing": CategorySpec("D1", 2, ("list_events",), False, False),
        "no_call_chat": CategorySpec("D1", 3, (), False, True, ()),
        "book_confirm": CategorySpec("D2", 1, ("request_booking", "confirm_booking"), True, False),
        "book_short": CategorySpec("D2", 2, ("request_booking", "confirm_booking"), True, False),
        "book_long": CategorySpec("D2", 3, ("request_booking", "confirm_booking"), True, False),
    },
    totals=SuiteTotals(total=6, per_dimension={"D1": 3, "D2": 3}, negative=1),
)


class CalendarSandbox:
    def __init__(self, events: Mapping[str, dict[str, Any]], validators: Mapping[str, Any]) -> None:
        self._events = events
        self._validators = validators
        self._ledger: dict[str, LedgerEntry] = {}

    def execute(self, tool: str, arguments: Any) -> ToolOutcome:
        if tool not in self._validators:
            return ToolOutcome.error("unknown_tool", f"no tool named {tool!r}")
        try:
            args = json.loads(arguments) if isinstance(arguments, str) else arguments
        except ValueError:
            return ToolOutcome.error("invalid_json", "arguments are not valid JSON")
        if not isinstance(args, dict) or any(True for _ in self._validators[tool].iter_errors(args)):
            return ToolOutcome.error("invalid_arguments", "arguments do not match the tool's schema")
        if tool == "get_event":
            event = self._events.get(args["event_id"])
            return (
                ToolOutcome(True, dict(event)) if event else ToolOutcome.error("not_found", "no such event")
            )
        if tool == "list_events":
            return ToolOutcome(
                True, {"events": [e for e in self._events.values() if e["date"] == args["date"]]}
            )
        if tool == "request_booking":
            booking_id = f"BK-{len(self._ledger) + 1}"
            self._ledger[booking_id] = LedgerEntry(booking_id, tool, args, "requested")
            return ToolOutcome(True, {"booking_id": booking_id, "status": "requested"})
        entry = self._ledger.get(args["booking_id"])
        if entry is None or entry.status != "requested":
            return ToolOutcome.error("not_found", "no requested booking with that id")
        self._ledger[entry.action_id] = LedgerEntry(entry.action_id, entry.tool, entry.arguments, "confirmed")
        return ToolOutcome(True, {"booking_id": entry.action_id, "status": "confirmed"})

    def ledger(self) -> tuple[LedgerEntry, ...]:
        return tuple(self._ledger.values())


def _other(param: str, value: Any) -> Any:
    return {"date": "2026-07-09", "start": "17:00", "duration_min": 45, "title": "Something else",
            "event_id": "E103" if value != "E103" else "E101"}.get(param)  # fmt: skip


def _sibling(tool: str, args: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    if tool == "get_event":
        return "list_events", {"date": "2026-07-03"}
    if tool == "list_events":
        return "get_event", {"event_id": "E101"}
    return None


def build(files: Mapping[str, bytes]) -> Domain:
    tools = tuple(json.loads(files["tools.json"]))
    events = {e["event_id"]: e for e in json.loads(files["fixtures.json"])["events"]}
    domain = Domain(
        name="calendar",
        tools=tools,
        read_only_tools=frozenset({"list_events", "get_event"}),
        default_whitelist=("list_events",),
        id_fields={"event_id": frozenset(events)},
        system_prompt=files["system_prompt.txt"].decode(),
        sandbox_factory=lambda: CalendarSandbox(events, domain.validators),
        chains=ChainSpec(frozenset({"request_booking"}), frozenset({"confirm_booking"}), "booking_id"),
        suite=SUITE,
        suite_path=DATA / "cases.jsonl",
        simulation=SimHints(
            hallucinated={"event_id": "E999"},
            other_value=_other,
            sibling=_sibling,
            extra_reads={"list_events": {"date": "2026-07-01"}},
            extra_mutation=(
                "request_booking",
                {"title": "Spam", "date": "2026-07-05", "start": "08:00", "duration_min": 15},
            ),  # fmt: skip
            answer_text="Done — it's in your calendar.",
            clarify_text="Happy to help another time.",
        ),
        input_files=dict(files),
        from_files=build,
    )
    return domain


def load_domain() -> Domain:
    return build({name: (DATA / name).read_bytes() for name in FILES})
