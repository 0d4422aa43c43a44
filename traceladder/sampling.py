"""Sampling by trace id: the same decision in every process, on every machine, at every stage.

The rule is OpenTelemetry's `TraceIdRatioBased`: keep a trace when the low 64 bits of its id are
below `round(rate * 2**64)`. So a trace kept at `serve` is kept again at evaluation with the same
rate, a trace sampled in by an SDK at that rate is sampled in here, and a rerun keeps the same
traces. `keep_errors` also keeps every trace with an error status; those traces are then kept with
probability 1, so they weigh 1 while sampled traces weigh 1/rate (rates stay unbiased).
"""

from __future__ import annotations

from dataclasses import dataclass

_LIMIT = 1 << 64


def bound(rate: float) -> int:
    """The exclusive upper bound on a trace id's low 64 bits (OTel's `get_bound_for_rate`)."""
    return round(rate * _LIMIT)


def parse_rate(text: str) -> float:
    """A --sample value: a number in (0, 1]."""
    try:
        rate = float(text)
    except ValueError:
        raise ValueError(f"--sample must be a number in (0, 1], not {text!r}") from None
    if not 0 < rate <= 1:
        raise ValueError(f"--sample must be in (0, 1], not {text}")
    return rate


@dataclass(frozen=True)
class Sampling:
    rate: float = 1.0
    keep_errors: bool = False

    @property
    def everything(self) -> bool:
        return self.rate >= 1.0

    def keeps(self, trace_id: str, error: bool = False) -> bool:
        """Whether a trace (hex id, as stored) is kept; an id that is not hex is kept (it cannot be
        sampled consistently, and dropping data silently is worse)."""
        if self.everything or (error and self.keep_errors):
            return True
        try:
            low = int(trace_id[-16:], 16)
        except ValueError:
            return True
        return low < bound(self.rate)

    def weight(self, error: bool) -> float:
        """How many traces of the population a kept trace stands for."""
        if self.everything or (error and self.keep_errors):
            return 1.0
        return 1.0 / self.rate

    def sql(self, trace_id: str = "trace_id", error: str = "error") -> str:
        """The same rule as a DuckDB predicate over a hex trace id column."""
        if self.everything:
            return "true"
        low = f"try_cast('0x' || right({trace_id}, 16) AS UBIGINT)"
        kept = f"({low} IS NULL OR {low} < {bound(self.rate)}::UBIGINT)"
        return f"({kept} OR coalesce({error}, false))" if self.keep_errors else kept


EVERYTHING = Sampling()
