"""What the MCP server needs of one case: a way to execute a call in the case's sandbox, recorded
as an `execute_tool` span in the case's trace. Pure of MCP: the server modules adapt it.

* `LocalCase` — a `ToolBox` (the case's sandbox, tracer and root span) in this process: inside a
  run (the run's own toolbox) or standing alone (`tools serve --db`).
* `ForwardedCase` — the run's tools URL (`TRACELADDER_TOOLS_URL`): a stdio server launched by an
  `--agent-cmd` agent executes each call in the run's own sandbox for the case, through the run's
  toolbox, so the case's ledger and trace hold it.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from opentelemetry import context as otel_context
from opentelemetry.context import Context

from traceladder.produce.subject.toolbox import CaseEnded, ToolBox

FORWARD_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class ToolResult:
    """A call's result text and whether it is the sandbox's error object (MCP `isError`)."""

    text: str
    is_error: bool


class CaseTools(Protocol):
    def call(self, name: str, arguments: Any, parent: Context | None) -> ToolResult:
        """Execute one call; never raises for a bad call (it is a tool error result)."""
        ...


@dataclass
class LocalCase:
    """A case's `ToolBox`; `default_parent` is the span context calls join when the caller sends
    none (a standalone server's `TRACEPARENT`, or its own root span for the case)."""

    toolbox: ToolBox
    default_parent: Context | None = None

    def call(self, name: str, arguments: Any, parent: Context | None) -> ToolResult:
        chosen = parent or self.default_parent
        token = otel_context.attach(chosen) if chosen is not None else None
        try:
            text = self.toolbox.call(name, arguments)
        except CaseEnded as exc:
            return ToolResult(_error_text("case_ended", str(exc)), True)
        finally:
            if token is not None:
                otel_context.detach(token)
        return ToolResult(text, is_sandbox_error(text))


@dataclass(frozen=True)
class ForwardedCase:
    """Calls forwarded to a run's tools URL (`POST {"name", "arguments"}` → `{"content"}`)."""

    url: str
    opener: Callable[..., Any] = urllib.request.urlopen

    def call(self, name: str, arguments: Any, parent: Context | None) -> ToolResult:
        body = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False, default=repr).encode()
        request = urllib.request.Request(
            self.url, data=body, method="POST", headers={"Content-Type": "application/json"}
        )
        try:
            with self.opener(request, timeout=FORWARD_TIMEOUT_S) as response:
                content = json.loads(response.read())["content"]
        except urllib.error.HTTPError as exc:
            if exc.code in (404, 409):  # the run ended the case (or never had it)
                return ToolResult(_error_text("case_ended", "the case ended; nothing was executed"), True)
            return ToolResult(_error_text("tools_unreachable", f"the run's tools: HTTP {exc.code}"), True)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            return ToolResult(_error_text("tools_unreachable", f"the run's tools at {self.url}: {exc}"), True)
        text = str(content)
        return ToolResult(text, is_sandbox_error(text))


def is_sandbox_error(text: str) -> bool:
    """Whether a result text is a sandbox's error object, `{"error": {"type", "message"}}`
    (`suite.domain.base.ToolOutcome.error`): the shape every failed call returns."""
    if not text.startswith('{"error"'):
        return False
    try:
        value = json.loads(text)
    except ValueError:
        return False
    error = value.get("error") if isinstance(value, dict) and len(value) == 1 else None
    return isinstance(error, dict) and {"type", "message"} <= set(error)


def _error_text(error_type: str, message: str) -> str:
    return json.dumps({"error": {"type": error_type, "message": message}}, ensure_ascii=False)
