"""The `sampling` table: which stage kept which share of traces, so rates computed later (`trend`)
know what each judged trace stands for. One row per sampled pass; nothing is written when a stage
kept everything."""

from __future__ import annotations

from typing import Any, Literal, Protocol

Stage = Literal["serve", "evaluate"]


class _Executes(Protocol):
    """A store or the connection of an open write transaction."""

    def execute(self, sql: str, params: Any = None, /) -> Any: ...


def record_sampling(target: _Executes, stage: Stage, rate: float, keep_errors: bool) -> None:
    """Record that `stage` kept a `rate` share of traces (and every trace with an error when
    `keep_errors`)."""
    target.execute(
        "INSERT INTO sampling (stage, rate, keep_errors) VALUES (?, ?, ?)", [stage, rate, keep_errors]
    )
