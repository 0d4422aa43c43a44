"""When a run's failures are the endpoint's, not the cases': stop, and keep only real outcomes.

A case that ended because the endpoint failed (`AgentOutcome.endpoint_error`: the request error
after the retry policy gave up, or an answer that is not a chat completion) is *held*, not
recorded, until the endpoint shows it works — the next case that ends otherwise — or the run ends.
The run stops:

* at once, when a decisive error (401, 403, 404, connection refused / DNS / TLS) comes before any
  case ended without an endpoint error: the first model requests are the endpoint check's second
  half (a `GET /models` cannot tell a wrong model name or a public model list from a usable key);
* after `limit` cases in a row ended with the same endpoint error (`http_503` five times).

Every held case of a stop is not recorded — they measured the outage, not the model — so
`--resume` runs them again; every case recorded before them is kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from traceladder.endpoints.probe import DECISIVE

T = TypeVar("T")
DEFAULT_LIMIT = 5


@dataclass(frozen=True)
class Trip(Generic[T]):
    """Why the run stops: the error type, how many cases in a row, the cases dropped."""

    error_type: str
    streak: int
    dropped: tuple[T, ...]
    decisive: bool  # stopped at the first sign, before the endpoint ever worked


@dataclass
class EndpointBreaker(Generic[T]):
    """Feed every finished case in completion order; not thread-safe (the runner holds a lock)."""

    limit: int = DEFAULT_LIMIT  # 0: never stop for a streak (decisive errors still stop)
    enabled: bool = True  # False: record everything at once, never stop (a simulated model)
    proven: bool = False  # some case ended without an endpoint error
    tripped: bool = False  # stopped: cases still finishing are kept only if the endpoint worked
    _held: list[T] = field(default_factory=list)
    _streak: int = 0
    _streak_type: str | None = None

    def observe(self, item: T, endpoint_error: str | None) -> tuple[Sequence[T], Trip[T] | None]:
        """(items to record now, a trip or None). On a trip every held item is dropped."""
        if self.tripped:
            return ((item,) if endpoint_error is None else ()), None
        if endpoint_error is None or not self.enabled:
            self.proven = True
            ready, self._held, self._streak, self._streak_type = [*self._held, item], [], 0, None
            return ready, None
        self._held.append(item)
        self._streak = self._streak + 1 if endpoint_error == self._streak_type else 1
        self._streak_type = endpoint_error
        decisive = not self.proven and endpoint_error in DECISIVE
        if decisive or (self.limit and self._streak >= self.limit):
            dropped, self._held, self.tripped = tuple(self._held), [], True
            return (), Trip(endpoint_error, self._streak, dropped, decisive)
        return (), None

    def release(self) -> Sequence[T]:
        """The held items, when the run ended without a trip: they are outcomes after all."""
        ready, self._held = self._held, []
        return ready
