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
        """The configuration as stored in `runs.config` (everything, so a run can be resumed)."""
        return asdict(self)

    def identity(self) -> dict[str, Any]:
        """The configuration that makes two runs comparable, hashed into the input hashes.

        `sim_seed` is left out: it plays the part of a real model's sampling noise, so repeated
        runs of one configuration may differ — which is what consistency and pass^k measure.
        `model` is left out too: runs and baselines record and compare it on its own, so a
        different model is reported as exactly that.
        """
        return {k: v for k, v in asdict(self).items() if k not in ("sim_seed", "model")}
