"""Where the judge is: plain data, importable without the OpenAI client library (the CLI builds
judge options for every command that may judge; only a call needs the client)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    import httpx2

DEFAULT_BASE_URL = "https://api.openai.com/v1"


@dataclass(frozen=True)
class JudgeEndpoint:
    """Where the judge is. `transport` replaces the network (the simulated judge, tests)."""

    model: str
    base_url: str | None = None
    api_key: str | None = None
    timeout_s: float = 60.0
    transport: httpx2.BaseTransport | None = None

    @property
    def provider(self) -> str:
        host = urlsplit(self.base_url or DEFAULT_BASE_URL).hostname or ""
        return (
            "traceladder.sim"
            if self.transport is not None
            else ("openrouter" if "openrouter" in host else "openai")
        )
