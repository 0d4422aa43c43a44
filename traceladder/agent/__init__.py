"""The agent side: OpenAI-compatible client and retry policy, the loop, the suite runner, the
simulated model and the judge's self-check."""

from traceladder.agent.config import AgentConfig, RetryPolicy
from traceladder.agent.runner import RunOptions, RunSummary, run_suite

__all__ = ["AgentConfig", "RetryPolicy", "RunOptions", "RunSummary", "run_suite"]
