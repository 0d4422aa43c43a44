"""The case as the agent under test receives it: an `AgentCase` (Python) or its JSON (a command).

Both carry the same fields: the case id, run id and repeat; the user's message(s); the domain's
system prompt and tool definitions (OpenAI format); and the model to use — a `sim:` model served
on 127.0.0.1 for the run, or the configured endpoint (its key only in the object and the process
environment, never recorded). A Python agent calls `case.call_tool(name, arguments)`; a command
POSTs `{"name", "arguments"}` to `tools_url`. Either may mount `mcp_url` instead, the case run's
own MCP endpoint (streamable HTTP; None when the `mcp` extra is not installed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from traceladder.produce.subject.toolbox import ToolBox


@dataclass(frozen=True)
class ModelAccess:
    """The model an agent under test should talk to (OpenAI-compatible)."""

    name: str
    base_url: str | None
    api_key: str | None


@dataclass(frozen=True)
class AgentCase:
    """One case for an agent under test. `call_tool` executes in the domain's sandbox and returns
    the result text; every call is an `execute_tool` span in the case's trace."""

    id: str
    run_id: str
    repeat: int
    dimension: str
    messages: tuple[dict[str, str], ...]
    system_prompt: str
    tools: tuple[dict[str, Any], ...]
    model: str
    base_url: str | None
    api_key: str | None
    tools_url: str | None
    mcp_url: str | None
    _toolbox: ToolBox = field(repr=False, compare=False)
    # A multi-turn case calls the agent once per turn: `turn` (0-based) is this call's, and
    # `messages` the conversation so far — each earlier turn's user message and the agent's
    # answer, then this turn's message. `conversation_id` is the same for every turn of one case
    # run (what an agent keeping its own memory keys it by). A single-turn case: turn 0.
    turn: int = 0
    conversation_id: str = ""

    @property
    def instruction(self) -> str:
        """The user's (first) message."""
        return self.messages[0]["content"]

    @property
    def message(self) -> str:
        """The user's message this call answers: the latest (a single-turn case: its only)."""
        return self.messages[-1]["content"]

    def call_tool(self, name: str, arguments: Any, call_id: str | None = None) -> str:
        """Run one tool call in the case's sandbox; `arguments` is JSON text or an object,
        `call_id` the model's id for the call (optional: without it the execution is paired with
        the model's call by tool and arguments)."""
        return self._toolbox.call(name, arguments, call_id)

    def to_json(self) -> dict[str, Any]:
        """The case as a command agent reads it on stdin (no key: that is in its environment)."""
        return {
            "case_id": self.id, "run_id": self.run_id, "repeat": self.repeat, "dimension": self.dimension,
            "messages": list(self.messages), "system_prompt": self.system_prompt, "tools": list(self.tools),
            "model": self.model, "base_url": self.base_url, "tools_url": self.tools_url,
            "mcp_url": self.mcp_url, "turn": self.turn, "conversation_id": self.conversation_id,
        }  # fmt: skip
