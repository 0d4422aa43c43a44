"""The replay sandbox: a declarative domain's tools answer with what they answered when the trace
was recorded.

A call is looked up by (tool name, canonical arguments): key-sorted compact JSON of the arguments
object, or the raw text when the arguments are not a JSON object (an agent that sent invalid
JSON). Several recorded results for one call are replayed in the order they were recorded; once
they run out the last one repeats. A call nobody recorded is not guessed: the model gets a tool
error (`no_recorded_result`, which the span carries as `error.type`), so a report tells "the model
asked something new" from "the tool failed" (a recorded failure is `recorded_error`).

Request → confirm chains keep their meaning where the domain declares them: a request whose
recorded result carries the link (e.g. `action_id`) opens a ledger entry, and a confirmation (or
an abort) carrying that link closes it — the end state the state rung compares.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from traceladder.suite.cases.hashes import canonical_json
from traceladder.suite.domain.base import ChainSpec, LedgerEntry, ToolOutcome

NO_RECORDED_RESULT = "no_recorded_result"
RECORDED_ERROR = "recorded_error"
_SHOWN = 200  # characters of the arguments the error message repeats


@dataclass(frozen=True)
class Recorded:
    """One recorded tool result: the text the tool returned, and whether it succeeded."""

    text: str
    ok: bool = True


def replay_key(tool: str, arguments: Any) -> tuple[str, str]:
    """(tool, canonical arguments). `arguments` is a dict, or the text a model sent."""
    if isinstance(arguments, str | bytes):
        text = arguments.decode("utf-8", "replace") if isinstance(arguments, bytes) else arguments
        try:
            parsed = json.loads(text) if text.strip() else {}
        except (ValueError, RecursionError):
            return tool, text
        if not isinstance(parsed, dict):
            return tool, text
        arguments = parsed
    return tool, canonical_json(arguments).decode("utf-8")


class ReplaySandbox:
    """A fresh replay per case: its own position in each call's recorded results, its own ledger."""

    def __init__(
        self,
        recordings: Mapping[tuple[str, str], tuple[Recorded, ...]],
        tools: frozenset[str],
        chains: ChainSpec,
        aborts: frozenset[str] = frozenset(),
    ) -> None:
        self._recordings = recordings
        self._tools = tools
        self._chains = chains
        self._aborts = aborts
        self._served: dict[tuple[str, str], int] = {}
        self._actions: dict[str, LedgerEntry] = {}

    def execute(self, tool: str, arguments: Any) -> ToolOutcome:
        if tool not in self._tools:
            return ToolOutcome.error("unknown_tool", f"no tool named {tool!r}")
        key = replay_key(tool, arguments)
        found = self._recordings.get(key)
        if not found:
            shown = key[1] if len(key[1]) <= _SHOWN else key[1][:_SHOWN] + "…"
            return ToolOutcome.error(NO_RECORDED_RESULT, f"no recorded result for {tool} {shown}")
        served = self._served.get(key, 0)
        self._served[key] = served + 1
        recorded = found[min(served, len(found) - 1)]
        parsed = _object(recorded.text)
        if not recorded.ok:
            error = {"error": {"type": RECORDED_ERROR, "message": recorded.text}}
            return ToolOutcome(False, error, RECORDED_ERROR, text=recorded.text)
        self._track(tool, _object(key[1]), parsed)
        return ToolOutcome(True, parsed, None, text=recorded.text)

    def ledger(self) -> tuple[LedgerEntry, ...]:
        return tuple(self._actions.values())

    def _track(self, tool: str, arguments: dict[str, Any], result: dict[str, Any]) -> None:
        link = self._chains.link
        if tool in self._chains.requests and isinstance(result.get(link), str):
            action = result[link]
            self._actions[action] = LedgerEntry(action, tool, arguments, "requested")
        elif tool in self._chains.confirmations:
            pending = self._actions.get(arguments.get(link))  # type: ignore[arg-type]
            if pending is not None and pending.status == "requested":
                status = "aborted" if tool in self._aborts else "confirmed"
                self._actions[pending.action_id] = LedgerEntry(
                    pending.action_id, pending.tool, pending.arguments, status
                )


def _object(text: str) -> dict[str, Any]:
    """The result as a JSON object when it is one (chains read their link from it), else {}."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}
