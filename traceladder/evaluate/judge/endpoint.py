"""Where the judge is: plain data, importable without the OpenAI client library (the CLI builds
judge options for every command that may judge; only a call needs the client)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from traceladder.endpoints.resolve import OPENAI_URL as DEFAULT_BASE_URL
from traceladder.endpoints.resolve import is_openrouter

if TYPE_CHECKING:
    import httpx2

__all__ = ["DEFAULT_BASE_URL", "JudgeEndpoint"]


@dataclass(frozen=True)
class JudgeEndpoint:
    """Where the judge is. `transport` replaces the network (the simulated judge, tests)."""

    model: str
    base_url: str | None = None
    api_key: str | None = None
    timeout_s: float = 60.0
    transport: httpx2.BaseTransport | None = None
    key_source: str | None = None  # the variable the key came from, for messages (never the key)

    @property
    def provider(self) -> str:
        if self.transport is not None:
            return "traceladder.sim"
        return "openrouter" if is_openrouter(self.base_url or DEFAULT_BASE_URL) else "openai"
