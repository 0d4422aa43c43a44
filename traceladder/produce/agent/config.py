"""Run configuration: everything that shapes outcomes, recorded with the run (never the key)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from traceladder.suite.cases.hashes import UNHASHED_CONFIG_KEYS

DEFAULT_MAX_TOKENS = 2048
TOKEN_PARAMS = ("auto", "max_tokens", "max_completion_tokens")


def redact_url(url: str | None) -> str | None:
    """The URL as it may be stored: no user:password, every query value replaced, no fragment.

    `http://u:p@host:8000/v1?api-key=s3cret` → `http://host:8000/v1?api-key=REDACTED`. Requests
    still use the full URL; only what is recorded (config, reports, baselines) is redacted.
    """
    if url is None:
        return None
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port is not None else "")
    query = urlencode([(k, "REDACTED") for k, _ in parse_qsl(parts.query, keep_blank_values=True)])
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded exponential backoff for 429 / 5xx / connection errors, honouring Retry-After."""

    max_attempts: int = 4
    base_delay_s: float = 0.5
    max_delay_s: float = 8.0

    def delay(self, attempt: int, retry_after_s: float | None) -> float:
        """Seconds to wait after failed attempt number `attempt` (1-based)."""
        if retry_after_s is not None:
            return max(0.0, min(retry_after_s, self.max_delay_s))
        return min(self.base_delay_s * 2 ** (attempt - 1), self.max_delay_s)


@dataclass(frozen=True)
class AgentConfig:
    model: str
    base_url: str | None = None
    max_steps: int = 8
    case_timeout_s: float = 120.0
    request_timeout_s: float = 60.0
    temperature: float = 0.0
    max_tokens: int = DEFAULT_MAX_TOKENS
    # Which request field carries the cap: "auto" sends max_completion_tokens to api.openai.com
    # (whose newer models refuse max_tokens) and max_tokens elsewhere; a server that rejects the
    # one sent gets the other once.
    token_param: str = "auto"
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    sim_seed: int | None = None  # sim:faulty only: which faults each case gets
    # Who plays goal cases' users (`--user-model`). Recorded only when set, so the configuration
    # (and its hash) of a run without one is what it was before this field existed.
    user_model: str | None = None

    def recorded(self) -> dict[str, Any]:
        """The configuration as stored in `runs.config`: everything needed to resume the run, with
        the base URL redacted (credentials in a URL must not reach a row, a report or a baseline)."""
        redacted = redact_url(self.base_url)
        recorded = dict(asdict(self), base_url=redacted, base_url_redacted=redacted != self.base_url)
        if self.user_model is None:
            del recorded["user_model"]
        return recorded

    def identity(self) -> dict[str, Any]:
        """The configuration that makes two runs comparable, hashed into the input hashes.

        `sim_seed` is left out: it plays the part of a real model's sampling noise, so repeated
        runs of one configuration may differ — which is what consistency and pass^k measure.
        `model` is left out too: runs and baselines record and compare it on its own, so a
        different model is reported as exactly that.
        """
        return {k: v for k, v in self.recorded().items() if k not in UNHASHED_CONFIG_KEYS}
