"""Run configuration: everything that shapes outcomes, recorded with the run (never the key)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


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
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    sim_seed: int | None = None  # sim:faulty only: which faults each case gets

    def recorded(self) -> dict[str, Any]:
        """The configuration as stored in `runs.config` and hashed into the run identity."""
        return asdict(self)
