"""OTLP/JSON of multi-turn conversations as a plain `openai` loop traced with the OTel GenAI
conventions records them: each turn its own trace, each model request a `chat` span whose
`gen_ai.input.messages` holds the whole history so far and whose `gen_ai.output.messages` holds
what the model sent. The script is the issue's: look up an order → ask to cancel it → confirm →
look up two more orders in parallel."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Per turn: the user's message and the calls the model makes in that turn (id, tool, arguments).
SCRIPT: list[tuple[str, list[tuple[str, str, dict[str, Any]]]]] = [
    ("Where is order W1?", [("c1", "get_order", {"order_id": "W1"})]),
    ("Please cancel it.", [("c2", "request_cancel", {"order_id": "W1"})]),
    ("Yes, I confirm.", [("c3", "confirm_action", {"order_id": "W1"})]),
    ("And W2 and W3?", [("c4", "get_order", {"order_id": "W2"}), ("c5", "get_order", {"order_id": "W3"})]),
]


def _attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"type": "text", "content": text}]}


def _calls(calls: list[tuple[str, str, dict[str, Any]]]) -> dict[str, Any]:
    parts = [{"type": "tool_call", "id": i, "name": n, "arguments": a} for i, n, a in calls]
    return {"role": "assistant", "parts": parts}


def _results(calls: list[tuple[str, str, dict[str, Any]]]) -> list[dict[str, Any]]:
    return [
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": i, "response": f"ok {n}"}]}
        for i, n, _ in calls
    ]


@dataclass
class Conversation:
    """Builds the turns' traces; `history` is what the loop carries from turn to turn."""

    name: str
    service: str = "support-agent"
    key: str | None = None  # gen_ai.conversation.id on every span, when the producer sets one
    start_ns: int = 1_800_000_000_000_000_000
    history: list[dict[str, Any]] = field(default_factory=list)
    window: int | None = None  # keep only the last N messages of history (a memory window)

    def turn(self, index: int, user: str, calls: list[tuple[str, str, dict[str, Any]]]) -> dict[str, Any]:
        """One OTLP/JSON request: turn `index`'s trace (two chat spans)."""
        tid = f"{self.name:0>16}{index:016x}"[-32:]
        t0 = self.start_ns + index * 10_000_000_000
        self.history.append(_user(user))
        first_input = list(self.history)
        answered = [*first_input, _calls(calls), *_results(calls)]
        closing = {"role": "assistant", "parts": [{"type": "text", "content": "done"}]}
        spans = [
            self._span(tid, 1, t0, first_input, [_calls(calls)]),
            self._span(tid, 2, t0 + 1_000_000, answered, [closing]),
        ]
        self.history = [*answered, closing]
        if self.window is not None:
            self.history = self.history[-self.window :]
        return {
            "resourceSpans": [
                {
                    "resource": {"attributes": [_attr("service.name", self.service)]},
                    "scopeSpans": [
                        {"scope": {"name": "opentelemetry.instrumentation.openai_v2"}, "spans": spans}
                    ],
                }
            ]
        }

    def _span(self, tid: str, n: int, t: int, given: list[Any], out: list[Any]) -> dict[str, Any]:
        attrs = [
            _attr("gen_ai.operation.name", "chat"),
            _attr("gen_ai.request.model", "sim"),
            _attr("gen_ai.input.messages", json.dumps(given)),
            _attr("gen_ai.output.messages", json.dumps(out)),
        ]
        if self.key is not None:
            attrs.append(_attr("gen_ai.conversation.id", self.key))
        return {
            "traceId": tid,
            "spanId": f"{n:016x}",
            "name": "chat sim",
            "kind": 3,
            "startTimeUnixNano": str(t),
            "endTimeUnixNano": str(t + 500_000),
            "attributes": attrs,
            "status": {},
        }

    def trace_id(self, index: int) -> str:
        return f"{self.name:0>16}{index:016x}"[-32:]


def write(path: Path, *requests: dict[str, Any]) -> str:
    """A collector-style JSON-lines file of OTLP/JSON requests (what `ingest` reads)."""
    path.write_text("".join(json.dumps(r) + "\n" for r in requests), encoding="utf-8")
    return str(path)
