"""The agent side: OpenAI-compatible client and retry policy, the loop, the suite runner, the
simulated model and the judge's self-check."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from traceladder.produce.agent.config import AgentConfig, RetryPolicy

if TYPE_CHECKING:
    from traceladder.produce.agent.runner import RunOptions, RunSummary, run_suite

__all__ = ["AgentConfig", "RetryPolicy", "RunOptions", "RunSummary", "run_suite"]

_RUNNER_NAMES = ("RunOptions", "RunSummary", "run_suite")


def __getattr__(name: str) -> Any:
    """The runner (and the OpenAI client library under it, ~0.4 s to import) loads on first use, so
    importing `traceladder.produce.agent.config` — as commands that never run an agent do — stays cheap."""
    if name in _RUNNER_NAMES:
        from traceladder.produce.agent import runner

        return getattr(runner, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
