"""A scripted model for multi-turn conversations on 127.0.0.1: the issue's four-turn script.

It decides each answer from the request alone — the number of user messages is the turn — and
records the calls it sent in each turn (`sent[turn]`), which the tests compare with the calls the
store attributes to that turn's trace: a request ending in a user message gets the turn's calls,
one ending in tool results gets a closing text."""

from __future__ import annotations

import json
from email.message import Message
from typing import Any

from tests.scripted_server import Reply, ScriptedServer, chat_reply

# Per turn: (tool, arguments) of the calls the model makes; turn 3 makes two in parallel.
PLAN: list[list[tuple[str, dict[str, Any]]]] = [
    [("get_order", {"order_id": "W1"})],
    [("request_cancel", {"order_id": "W1"})],
    [("confirm_action", {"order_id": "W1"})],
    [("get_order", {"order_id": "W2"}), ("get_order", {"order_id": "W3"})],
]
USER = ["Where is order W1?", "Please cancel it.", "Yes, I confirm.", "And W2 and W3?"]


class MultiTurnModel(ScriptedServer):
    def __init__(self) -> None:
        super().__init__()
        self.sent: dict[int, list[str]] = {}

    def post(self, path: str, headers: Message, body: dict[str, Any] | None, raw: bytes) -> Reply:
        messages = (body or {}).get("messages") or []
        turn = sum(1 for m in messages if m.get("role") == "user") - 1
        if not messages or messages[-1].get("role") != "user" or not 0 <= turn < len(PLAN):
            return chat_reply({"role": "assistant", "content": "done"})
        calls = [
            {"id": f"call_{turn}_{j}", "type": "function",
             "function": {"name": name, "arguments": json.dumps(arguments)}}
            for j, (name, arguments) in enumerate(PLAN[turn])
        ]  # fmt: skip
        with self.lock:
            self.sent[turn] = [c["id"] for c in calls]
        return chat_reply({"role": "assistant", "content": None, "tool_calls": calls}, "tool_calls")
