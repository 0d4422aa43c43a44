"""A tiny tool-calling agent loop on the real ``openai`` client.

The loop is producer-neutral: a ``Telemetry`` object (see ``producers.py``) wraps the
whole run (agent span), each tool execution (tool span) and may decorate the tool
functions. The OpenAI call itself is traced by whichever instrumentation the producer
installed. Nothing here sets a convention attribute by hand.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

MODEL = "gpt-4o-mini"
SYSTEM_PROMPT = "You are a concise travel assistant. Use the tools when they help."
MAX_TURNS = 6

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the current weather for a location.",
            "parameters": {
                "type": "object",
                "properties": {"location": {"type": "string", "description": "City name, e.g. Paris"}},
                "required": ["location"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_time",
            "description": "Get the current local time in a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "book_table",
            "description": "Book a restaurant table.",
            "parameters": {
                "type": "object",
                "properties": {
                    "restaurant": {"type": "string"},
                    "party_size": {"type": "integer", "minimum": 1},
                },
                "required": ["restaurant", "party_size"],
                "additionalProperties": False,
            },
        },
    },
]
TOOL_BY_NAME = {t["function"]["name"]: t["function"] for t in TOOLS}


# --- fake local tool implementations (deterministic) -------------------------------------
def get_weather(location: str) -> str:
    return json.dumps({"location": location, "conditions": "sunny", "temperature_c": 22})


def get_time(city: str) -> str:
    return json.dumps({"city": city, "local_time": "14:05" if city == "Paris" else "21:05"})


def book_table(restaurant: str, party_size: int) -> str:
    if not isinstance(party_size, int) or party_size < 1:
        raise ValueError(f"party_size must be a positive integer, got {party_size!r}")
    return json.dumps({"restaurant": restaurant, "party_size": party_size, "confirmation": "BK-1042"})


TOOL_IMPLS: dict[str, Callable[..., str]] = {
    "get_weather": get_weather,
    "get_time": get_time,
    "book_table": book_table,
}


class ToolArgumentsError(ValueError):
    """The model's argument string is not a JSON object."""


@dataclass
class ToolCall:
    turn: int
    index: int
    id: str | None
    name: str
    arguments_raw: str

    @property
    def description(self) -> str | None:
        fn = TOOL_BY_NAME.get(self.name)
        return fn.get("description") if fn else None

    @property
    def parameters_schema(self) -> dict[str, Any] | None:
        fn = TOOL_BY_NAME.get(self.name)
        return fn.get("parameters") if fn else None


@dataclass
class ExecutedCall:
    call: ToolCall
    result: str
    error: bool


@dataclass
class AgentResult:
    calls: list[ExecutedCall] = field(default_factory=list)
    final_text: str | None = None
    turns: int = 0


class Telemetry:
    """No-op telemetry; producers override what their package supports."""

    def run_agent(self, user_text: str, body: Callable[[], AgentResult]) -> AgentResult:
        return body()

    def run_tool(self, call: ToolCall, execute: Callable[[], str]) -> str:
        return execute()

    def tool_impl(self, name: str, fn: Callable[..., str]) -> Callable[..., str]:
        return fn


def _parse_arguments(raw: str) -> dict[str, Any]:
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ToolArgumentsError(f"arguments are not valid JSON: {exc.msg} at char {exc.pos}") from None
    if not isinstance(value, dict):
        raise ToolArgumentsError("arguments must be a JSON object")
    return value


def run_agent(client: Any, user_text: str, telemetry: Telemetry) -> AgentResult:
    impls = {name: telemetry.tool_impl(name, fn) for name, fn in TOOL_IMPLS.items()}

    def body() -> AgentResult:
        result = AgentResult()
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": user_text},
        ]
        for turn in range(1, MAX_TURNS + 1):
            result.turns = turn
            response = client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS)
            msg = response.choices[0].message
            tool_calls = msg.tool_calls or []
            if not tool_calls:
                result.final_text = msg.content
                return result
            # Feed the assistant turn back verbatim: argument strings byte-for-byte.
            assistant: dict[str, Any] = {"role": "assistant", "content": msg.content, "tool_calls": []}
            for tc in tool_calls:
                entry: dict[str, Any] = {
                    "type": "function",
                    "function": {"name": tc.function.name, "arguments": tc.function.arguments},
                }
                if getattr(tc, "id", None) is not None:
                    entry = {"id": tc.id, **entry}
                assistant["tool_calls"].append(entry)
            messages.append(assistant)
            for index, tc in enumerate(tool_calls):
                call = ToolCall(
                    turn=turn,
                    index=index,
                    id=getattr(tc, "id", None),
                    name=tc.function.name,
                    arguments_raw=tc.function.arguments,
                )

                def execute(call: ToolCall = call) -> str:
                    impl = impls.get(call.name)
                    if impl is None:
                        raise KeyError(f"unknown tool {call.name!r}")
                    return impl(**_parse_arguments(call.arguments_raw))

                try:
                    output = telemetry.run_tool(call, execute)
                    error = False
                except Exception as exc:  # the agent reports the failure to the model
                    output = f"Error: {type(exc).__name__}: {exc}"
                    error = True
                result.calls.append(ExecutedCall(call=call, result=output, error=error))
                tool_msg: dict[str, Any] = {"role": "tool", "content": output}
                if call.id is not None:
                    tool_msg["tool_call_id"] = call.id
                messages.append(tool_msg)
        raise RuntimeError(f"no final answer after {MAX_TURNS} turns")

    return telemetry.run_agent(user_text, body)
